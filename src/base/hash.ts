/** FNV-1a, 32 bits, of a name's UTF-16 code units: ids on the wire derived from names (serializers, reductions). */
export function fnv1a(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i += 1) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
