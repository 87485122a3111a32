/**
 * The structured-clone serializer: node's v8.Serializer, which keeps shared references and cycles
 * and handles Map, Set, Date, RegExp, Error and bigint natively. Binary values go through the
 * host-object hooks (inline with their type, or out of band); registered class instances, which
 * v8 would send as plain objects, are swapped for markers before encoding and rebuilt after
 * decoding.
 */
import v8 from 'node:v8';
import { SerializationError } from '../base/errors.js';
import {
  classByName,
  encodeOrExplain,
  classNameOf,
  registeredClassOf,
  hasRegisteredClasses,
  resolveSerializerOptions,
  unknownClassError,
  unregisteredClassError,
  isBuiltinObject,
  type RegisteredClass,
  type ResolvedSerializerOptions,
  type SerializerOptions,
} from './registry.js';
import type { Serializer } from './serializer.js';
import { fromBytes, travelsOutOfBand, typeCodeOf, viewBytes, type BinaryValue } from '../base/typed-arrays.js';

/** What follows the v8 header (uint32): the value alone, or [value, markers] to rebuild classes in. */
const enum Layout {
  Plain = 0,
  WithClasses = 1,
}

/** Bit 0 of a binary value's first uint32 (the rest is the type code). */
const OUT_OF_BAND_BIT = 1;

const NO_PARTS: readonly Uint8Array[] = [];

/** Documented node APIs missing from @types/node. */
interface HostObjectSwitch {
  _setTreatArrayBufferViewsAsHostObjects(flag: boolean): void;
}

class GraphWriter extends v8.Serializer {
  readonly outOfBand: Uint8Array[] = [];

  constructor(private readonly threshold: number) {
    super();
    // Makes v8 hand every typed array, Buffer and DataView to _writeHostObject.
    (this as unknown as HostObjectSwitch)._setTreatArrayBufferViewsAsHostObjects(true);
  }

  /** Called by v8: type code and out-of-band bit, then the part's index or the inline bytes. */
  _writeHostObject(value: ArrayBufferView): void {
    const code = typeCodeOf(value);
    if (code === undefined) throw new SerializationError(`a ${classNameOf(value)}, a binary type ccjs does not know`);
    const bytes = viewBytes(value);
    if (travelsOutOfBand(bytes.byteLength, this.threshold)) {
      this.writeUint32((code << 1) | OUT_OF_BAND_BIT);
      this.writeUint32(this.outOfBand.push(bytes) - 1);
    } else {
      this.writeUint32(code << 1);
      this.writeUint32(bytes.byteLength);
      this.writeRawBytes(bytes);
    }
  }
}

class GraphReader extends v8.Deserializer {
  constructor(
    bytes: Uint8Array,
    private readonly outOfBand: readonly Uint8Array[],
  ) {
    super(bytes);
  }

  /** Called by v8 for what _writeHostObject wrote. */
  _readHostObject(): BinaryValue {
    const header = this.readUint32();
    const code = header >>> 1;
    if ((header & OUT_OF_BAND_BIT) === 0) return fromBytes(code, this.readRawBytes(this.readUint32()));
    const index = this.readUint32();
    const part = this.outOfBand[index];
    if (part === undefined) {
      throw new SerializationError(`a v8 message refers to out-of-band part ${index + 1}, but only ${this.outOfBand.length} came with it`);
    }
    return fromBytes(code, part);
  }
}

/**
 * The structured-clone serializer (Node's `v8` module): keeps shared references and cycles, and
 * handles Map, Set, Date, RegExp, Error and bigint natively; typed arrays and registered classes
 * travel as with {@link MsgpackSerializer}.
 */
export class V8Serializer implements Serializer {
  /** Carried in every message, so that endpoints using different serializers are caught. */
  readonly name = 'v8';
  private readonly options: ResolvedSerializerOptions;

  /** @throws {@link ConfigError} for a negative `outOfBandThreshold`. */
  constructor(options: SerializerOptions = {}) {
    this.options = resolveSerializerOptions(options);
  }

  /** @inheritDoc Serializer.encode */
  encode(value: unknown): Uint8Array | Uint8Array[] {
    return encodeOrExplain(this.name, value, (part) => this.encodeGraph(part), false);
  }

  /** @inheritDoc Serializer.decode */
  decode(bytes: Uint8Array, outOfBand: readonly Uint8Array[] = NO_PARTS): unknown {
    let decoded: unknown;
    let layout: number;
    try {
      const reader = new GraphReader(bytes, outOfBand);
      reader.readHeader();
      layout = reader.readUint32();
      decoded = reader.readValue();
    } catch (error) {
      if (error instanceof SerializationError) throw error;
      throw new SerializationError(`the v8 serializer cannot decode a message: ${messageOf(error)}`, '', { cause: error });
    }
    if (layout === Layout.Plain) return decoded;
    if (layout !== Layout.WithClasses || !Array.isArray(decoded) || !Array.isArray(decoded[1])) {
      throw new SerializationError('the v8 serializer cannot decode a message: corrupt layout');
    }
    return new ClassRebuilder(decoded[1] as unknown[]).rebuild(decoded[0]);
  }

  private encodeGraph(value: unknown): Uint8Array | Uint8Array[] {
    const writer = new GraphWriter(this.options.outOfBandThreshold);
    writer.writeHeader();
    // The class pass costs a walk of the value, so it runs only when it can matter.
    const marked = this.options.strict || hasRegisteredClasses() ? markClasses(value, this.options.strict) : undefined;
    writer.writeUint32(marked === undefined ? Layout.Plain : Layout.WithClasses);
    writer.writeValue(marked === undefined ? value : marked);
    const released = writer.releaseBuffer();
    // A plain Uint8Array, not the Buffer: Buffer#slice makes views, which surprises code that copies with slice.
    const graph = new Uint8Array(released.buffer, released.byteOffset, released.byteLength);
    return writer.outOfBand.length === 0 ? graph : [graph, ...writer.outOfBand];
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------------------------
// Registered classes. v8 sends a class instance as a plain object, so the encoder sends a copy of
// the value in which each registered instance is a marker { name, fields }, plus the list of the
// markers; the decoder finds the markers by identity (v8 keeps it) and replaces them with
// instances. Copies and instances are memoized, so shared references and cycles survive.

interface Marker {
  readonly name: string;
  fields: unknown;
}

/** How the class passes treat an object. */
const enum Shape {
  /** Sent by v8 as is: Date, RegExp, Error, binary, boxed primitives. */
  Atom,
  Array,
  /** Plain objects, and (when not strict) instances of unregistered classes. */
  Record,
  Map,
  Set,
  Instance,
}

function shapeOf(value: object, strict: boolean): Shape {
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) return Shape.Record;
  if (Array.isArray(value)) return Shape.Array;
  if (registeredClassOf(value) !== undefined) return Shape.Instance;
  if (value instanceof Map) return Shape.Map;
  if (value instanceof Set) return Shape.Set;
  if (isV8Atom(value)) return Shape.Atom;
  if (strict) throw unregisteredClassError(value);
  return Shape.Record;
}

function isV8Atom(value: object): boolean {
  return (
    typeCodeOf(value) !== undefined ||
    value instanceof Date ||
    isBuiltinObject(value)
  );
}

/** [copy of value with markers, markers], or undefined when value holds no registered instance. */
function markClasses(value: unknown, strict: boolean): [unknown, Marker[]] | undefined {
  if (!holdsInstances(value, strict, new Set())) return undefined;
  const marking = new ClassMarking(strict);
  return [marking.copy(value), marking.markers];
}

function holdsInstances(value: unknown, strict: boolean, visited: Set<object>): boolean {
  if (typeof value !== 'object' || value === null || visited.has(value)) return false;
  visited.add(value);
  switch (shapeOf(value, strict)) {
    case Shape.Atom:
      return false;
    case Shape.Instance:
      return true;
    case Shape.Array:
      for (const item of value as unknown[]) if (holdsInstances(item, strict, visited)) return true;
      return false;
    case Shape.Record:
      for (const key of Object.keys(value)) {
        if (holdsInstances((value as Record<string, unknown>)[key], strict, visited)) return true;
      }
      return false;
    case Shape.Map:
      for (const [key, item] of value as Map<unknown, unknown>) {
        if (holdsInstances(key, strict, visited) || holdsInstances(item, strict, visited)) return true;
      }
      return false;
    case Shape.Set:
      for (const item of value as Set<unknown>) if (holdsInstances(item, strict, visited)) return true;
      return false;
  }
}

class ClassMarking {
  readonly markers: Marker[] = [];
  private readonly copies = new Map<object, unknown>();

  constructor(private readonly strict: boolean) {}

  copy(value: unknown): unknown {
    if (typeof value !== 'object' || value === null) return value;
    const known = this.copies.get(value);
    if (known !== undefined) return known;
    switch (shapeOf(value, this.strict)) {
      case Shape.Atom:
        return value;
      case Shape.Instance:
        return this.mark(value, registeredClassOf(value) as RegisteredClass);
      case Shape.Array: {
        const copy: unknown[] = [];
        this.copies.set(value, copy);
        for (const item of value as unknown[]) copy.push(this.copy(item));
        return copy;
      }
      case Shape.Record: {
        // Null prototype: an own '__proto__' key stays a key instead of setting the prototype.
        const copy = Object.create(null) as Record<string, unknown>;
        this.copies.set(value, copy);
        for (const [key, item] of Object.entries(value)) copy[key] = this.copy(item);
        return copy;
      }
      case Shape.Map: {
        const copy = new Map<unknown, unknown>();
        this.copies.set(value, copy);
        for (const [key, item] of value as Map<unknown, unknown>) copy.set(this.copy(key), this.copy(item));
        return copy;
      }
      case Shape.Set: {
        const copy = new Set<unknown>();
        this.copies.set(value, copy);
        for (const item of value as Set<unknown>) copy.add(this.copy(item));
        return copy;
      }
    }
  }

  private mark(instance: object, registered: RegisteredClass): Marker {
    const marker: Marker = { name: registered.name, fields: undefined };
    this.copies.set(instance, marker);
    this.markers.push(marker);
    marker.fields = this.copy(registered.fieldsOf(instance));
    return marker;
  }
}

/** Marks an instance whose static fromCCJS is still waiting for its fields. */
const IN_PROGRESS = Symbol('in progress');

/** Replaces the markers in a decoded value, which it owns, in place. */
class ClassRebuilder {
  private readonly markers: Set<unknown>;
  /** Each object visited, with what replaces it (itself unless it is a marker). */
  private readonly done = new Map<object, unknown>();

  constructor(markers: unknown[]) {
    this.markers = new Set(markers);
  }

  rebuild(value: unknown): unknown {
    if (typeof value !== 'object' || value === null) return value;
    const replacement = this.done.get(value);
    if (replacement === IN_PROGRESS) {
      throw new SerializationError(`cannot rebuild class '${(value as Marker).name}': its fromCCJS needs its fields, which refer back to it`);
    }
    if (replacement !== undefined) return replacement;
    if (this.markers.has(value)) return this.instantiate(value as Marker);
    this.done.set(value, value);
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) this.replaceAt(value, index);
    } else if (value instanceof Map) {
      this.rebuildMap(value as Map<unknown, unknown>);
    } else if (value instanceof Set) {
      this.rebuildSet(value as Set<unknown>);
    } else if (Object.getPrototypeOf(value) === Object.prototype) {
      for (const key of Object.keys(value)) this.replaceAt(value as Record<string, unknown>, key);
    }
    return value;
  }

  private replaceAt<K extends string | number>(container: Record<K, unknown>, key: K): void {
    const item = container[key];
    const rebuilt = this.rebuild(item);
    if (rebuilt !== item) container[key] = rebuilt;
  }

  private rebuildMap(map: Map<unknown, unknown>): void {
    const entries = [...map].map(([key, item]) => [key, this.rebuild(key), item, this.rebuild(item)] as const);
    if (entries.some(([key, rebuiltKey]) => rebuiltKey !== key)) {
      map.clear(); // re-adding every entry keeps their order
      for (const [, key, , item] of entries) map.set(key, item);
    } else {
      for (const [key, , item, rebuiltItem] of entries) if (rebuiltItem !== item) map.set(key, rebuiltItem);
    }
  }

  private rebuildSet(set: Set<unknown>): void {
    const items = [...set];
    const rebuilt = items.map((item) => this.rebuild(item));
    if (rebuilt.some((item, index) => item !== items[index])) {
      set.clear();
      for (const item of rebuilt) set.add(item);
    }
  }

  private instantiate(marker: Marker): object {
    const registered = classByName(marker.name);
    if (registered === undefined) throw unknownClassError(marker.name);
    if (registered.hasFromCCJS) {
      this.done.set(marker, IN_PROGRESS);
      const instance = registered.instantiate(this.rebuild(marker.fields));
      this.done.set(marker, instance);
      return instance;
    }
    // Handed out before its fields are rebuilt, so fields may refer back to it.
    const instance = registered.emptyInstance();
    this.done.set(marker, instance);
    return registered.assignFields(instance, this.rebuild(marker.fields));
  }
}
