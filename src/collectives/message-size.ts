/**
 * The per-member message size that selection keys on, estimated without serializing: binary
 * values by their bytes, strings by their length, objects by their binary and string fields
 * one level deep (enough for the usual "header plus payload array" objects), anything else 0.
 */
export function estimatedBytes(value: unknown): number {
  const direct = directBytes(value);
  if (direct !== undefined) return direct;
  if (Array.isArray(value)) return value.reduce((total: number, element) => total + (directBytes(element) ?? 0), 0);
  if (typeof value === 'object' && value !== null) {
    let total = 0;
    for (const field of Object.values(value)) total += directBytes(field) ?? 0;
    return total;
  }
  return 0;
}

function directBytes(value: unknown): number | undefined {
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return value.byteLength;
  if (typeof value === 'string') return value.length;
  return undefined;
}
