/**
 * What travels as what, shared by the serializers: classes whose instances travel as instances
 * (the sender names the class, the receiver rebuilds the object with the class's prototype; both
 * processes must register the class under the same name), the serializer options, and the search
 * for the part of a value that could not be encoded, for error messages.
 */
import { ConfigError, SerializationError } from '../base/errors.js';
import { DEFAULT_OUT_OF_BAND_THRESHOLD } from '../base/typed-arrays.js';

/** Options of the built-in serializers. */
export interface SerializerOptions {
  /** Binary values of at least this many bytes travel out of band (default 1024). */
  outOfBandThreshold?: number;
  /**
   * Reject instances of unregistered classes with a SerializationError (default true); false sends
   * them as plain objects (their own enumerable fields, without their prototype).
   */
  strict?: boolean;
}

export interface ResolvedSerializerOptions {
  readonly outOfBandThreshold: number;
  readonly strict: boolean;
}

export function resolveSerializerOptions(options: SerializerOptions): ResolvedSerializerOptions {
  const { outOfBandThreshold = DEFAULT_OUT_OF_BAND_THRESHOLD, strict = true } = options;
  if (typeof outOfBandThreshold !== 'number' || Number.isNaN(outOfBandThreshold) || outOfBandThreshold < 0) {
    throw new ConfigError(`outOfBandThreshold must be a number of bytes >= 0, not ${String(outOfBandThreshold)}`);
  }
  return { outOfBandThreshold, strict };
}

/** Any class (what {@link registerClass} takes), whatever its constructor's parameters, private constructors included (hence not a `new` signature). */
export type ClassConstructor<T extends object = object> = Function & {
  /** The prototype that arriving instances get. */
  readonly prototype: T;
};

/** Optional hooks a registered class may define. */
interface ClassHooks {
  /** Static: builds an instance from the fields `toCCJS` (or the own enumerable fields) produced. */
  fromCCJS?: (fields: unknown) => object;
  prototype: { toCCJS?: () => unknown };
}

export class RegisteredClass {
  readonly prototype: object;
  /** True when the class rebuilds its instances itself (static `fromCCJS`). */
  readonly hasFromCCJS: boolean;
  /** True when the class chooses its fields itself (instance method `toCCJS`). */
  readonly hasToCCJS: boolean;

  constructor(
    readonly name: string,
    readonly ctor: ClassConstructor,
  ) {
    const hooks = ctor as unknown as ClassHooks;
    this.prototype = ctor.prototype;
    this.hasFromCCJS = typeof hooks.fromCCJS === 'function';
    this.hasToCCJS = typeof hooks.prototype.toCCJS === 'function';
  }

  /** What to send for `instance`: `toCCJS()`, or a plain copy of its own enumerable fields. */
  fieldsOf(instance: object): unknown {
    return this.hasToCCJS ? (instance as { toCCJS: () => unknown }).toCCJS() : { ...instance };
  }

  /** The instance that received `fields` stand for. */
  instantiate(fields: unknown): object {
    if (this.hasFromCCJS) return (this.ctor as unknown as Required<ClassHooks>).fromCCJS(fields);
    return this.assignFields(this.emptyInstance(), fields);
  }

  /**
   * The two steps of `instantiate` without `fromCCJS`, for decoders that must hand out the
   * instance before its fields are decoded (cycles through the instance).
   */
  emptyInstance(): object {
    return Object.create(this.prototype) as object;
  }

  assignFields(instance: object, fields: unknown): object {
    return Object.assign(instance, fields);
  }
}

const classesByName = new Map<string, RegisteredClass>();
const classesByPrototype = new Map<object, RegisteredClass>();

/**
 * Makes instances of `ctor` arrive as instances of `ctor`. `name` (default `ctor.name`) is what
 * travels; registering the same class again under the same name does nothing.
 */
/**
 * Makes instances of `ctor` arrive as instances of `ctor` (prototype and fields restored) with
 * either serializer; every process that sends or receives them must register the class under the
 * same name, before the first one travels. A subclass needs its own registration. A class may choose what
 * travels with an instance method `toCCJS()` (returning the fields) and a static `fromCCJS(fields)`
 * (building the instance); without them its own enumerable fields travel and are assigned to an
 * object made with its prototype, without calling the constructor.
 *
 * @param name - the name it travels under (default: the class name; minified code should pass one).
 * @throws {TypeError} if the name is taken by another class or the class is registered under another name.
 */
export function registerClass(ctor: ClassConstructor, name: string = ctor.name): void {
  if (name === '') throw new TypeError('registerClass: an anonymous class needs an explicit name');
  const sameName = classesByName.get(name);
  if (sameName !== undefined) {
    if (sameName.ctor === ctor) return;
    throw new TypeError(`registerClass: the name '${name}' is already taken by another class`);
  }
  const sameClass = classesByPrototype.get(ctor.prototype);
  if (sameClass !== undefined) {
    throw new TypeError(`registerClass: class ${ctor.name} is already registered as '${sameClass.name}'`);
  }
  const registered = new RegisteredClass(name, ctor);
  classesByName.set(name, registered);
  classesByPrototype.set(registered.prototype, registered);
}

export function classByName(name: string): RegisteredClass | undefined {
  return classesByName.get(name);
}

export function classByConstructor(ctor: ClassConstructor): RegisteredClass | undefined {
  return classesByPrototype.get(ctor.prototype);
}

export function isRegistered(ctor: ClassConstructor): boolean {
  return classesByPrototype.has(ctor.prototype);
}

/** The registered class `value` is a direct instance of (subclasses must register themselves). */
export function registeredClassOf(value: object): RegisteredClass | undefined {
  return classesByPrototype.get(Object.getPrototypeOf(value) as object);
}

export function hasRegisteredClasses(): boolean {
  return classesByPrototype.size > 0;
}

/** True for objects other than plain objects and arrays, i.e. what strict mode must account for. */
export function isClassInstance(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype !== Object.prototype && prototype !== Array.prototype && prototype !== null;
}

/**
 * Built-in objects that travel without registration even in strict mode: errors, regular
 * expressions and boxed primitives (binary values, Date, Map and Set each have their own encoding).
 */
export function isBuiltinObject(value: object): boolean {
  return value instanceof Error || value instanceof RegExp || value instanceof Boolean || value instanceof Number || value instanceof String;
}

/** The class name of a class instance, for messages. */
export function classNameOf(value: object): string {
  const ctor: unknown = (value as { constructor?: unknown }).constructor;
  return typeof ctor === 'function' && ctor.name !== '' ? ctor.name : 'anonymous class';
}

/** What strict mode throws for an instance of an unregistered class. */
export function unregisteredClassError(value: object): SerializationError {
  const name = classNameOf(value);
  return new SerializationError(
    `an instance of unregistered class ${name}, which would arrive as a plain object without its methods: ` +
      `call registerClass(${name}) in every process before sending it, or pass strictSerialization: false (CCJS_STRICT_SERIALIZATION=0) to send such instances as plain objects`,
  );
}

/** The decoded class name has no registered class: the receiver forgot `registerClass`. */
export function unknownClassError(name: unknown): SerializationError {
  return new SerializationError(
    `cannot decode an instance of class '${String(name)}': no class is registered under that name in this process (call registerClass)`,
  );
}

// ---------------------------------------------------------------------------------------------
// Locating what could not be encoded. Runs only after an encode failed, so it may be slow: it
// probes parts of the value with the failing serializer and descends into the first part that
// fails on its own, until no part of the current one does.

/** How a serializer behaves, for the search. */
interface EncodeFailureContext {
  /** Encodes `value` alone and throws if that fails (without searching, unlike `encode`). */
  readonly probe: (value: unknown) => void;
  /** Whether the serializer rejects cycles (msgpack sends trees). */
  readonly cyclesFail: boolean;
}

/**
 * `encodeGraph(value)`; where that throws, a SerializationError that names what could not be
 * encoded and where, e.g. `a function (onClick) at value.handlers[2]`, found by encoding parts of
 * `value` alone. `cyclesFail`: the serializer rejects cycles (msgpack sends trees).
 */
export function encodeOrExplain<T>(serializerName: string, value: unknown, encodeGraph: (value: unknown) => T, cyclesFail: boolean): T {
  try {
    return encodeGraph(value);
  } catch (error) {
    throw unencodableError(serializerName, value, error, { probe: encodeGraph, cyclesFail });
  }
}

/** The SerializationError for `root`, whose encoding failed with `rootError`. */
function unencodableError(serializerName: string, root: unknown, rootError: unknown, context: EncodeFailureContext): SerializationError {
  let culprit: Culprit;
  try {
    culprit = locate(root, 'value', rootError, context, new Map());
  } catch {
    // A value nested deeply enough to overflow the stack: the search cannot say more than the failure.
    culprit = { path: 'value', value: root, error: rootError };
  }
  return new SerializationError(
    `the ${serializerName} serializer cannot encode ${describeCulprit(culprit)} at ${culprit.path}`,
    culprit.path,
    { cause: culprit.error },
  );
}

/** The smallest part of a value that fails to encode. */
interface Culprit {
  /** Where it sits, e.g. `value.handlers[2]`. */
  readonly path: string;
  readonly value: unknown;
  /** Set when the failure is a reference back to the enclosing object at this path. */
  readonly cycleTo?: string;
  /** What encoding it reported. */
  readonly error: unknown;
}

/** `ancestors` holds the objects enclosing `value`, with their paths. */
function locate(value: unknown, path: string, error: unknown, context: EncodeFailureContext, ancestors: Map<object, string>): Culprit {
  if (typeof value !== 'object' || value === null) return { path, value, error };
  ancestors.set(value, path);
  let cycle: { path: string; cycleTo: string } | undefined;
  for (const [childPath, child] of childrenOf(value, path)) {
    const ancestorPath = typeof child === 'object' && child !== null ? ancestors.get(child) : undefined;
    if (ancestorPath !== undefined) {
      // Probing a reference back up would only repeat the enclosing object's failure.
      if (context.cyclesFail) cycle ??= { path: childPath, cycleTo: ancestorPath };
      continue;
    }
    try {
      context.probe(child);
    } catch (childError) {
      return locate(child, childPath, childError, context, ancestors);
    }
  }
  return cycle === undefined ? { path, value, error } : { ...cycle, value, error };
}

/** The parts of `value` a serializer encodes, each with its path. */
function childrenOf(value: object, path: string): Array<[string, unknown]> {
  if (Array.isArray(value)) return value.map((item, index): [string, unknown] => [`${path}[${index}]`, item]);
  if (value instanceof Map) {
    return [...value].flatMap(([key, item], index): Array<[string, unknown]> => [
      [`${path}.keys()[${index}]`, key],
      [`${path}.<${mapKeyText(key, index)}>`, item],
    ]);
  }
  if (value instanceof Set) return [...value].map((item, index): [string, unknown] => [`${path}.values()[${index}]`, item]);
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof Date) return [];
  const registered = registeredClassOf(value);
  if (registered?.hasToCCJS === true) return [[`${path}.toCCJS()`, registered.fieldsOf(value)]];
  return Object.entries(value).map(([key, item]): [string, unknown] => [propertyPath(path, key), item]);
}

function propertyPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function mapKeyText(key: unknown, index: number): string {
  return typeof key === 'object' || typeof key === 'function' || typeof key === 'symbol' ? `key #${index}` : String(key);
}

/** Says what the culprit is, e.g. `a function (onClick)` or `an instance of unregistered class Foo (...)`. */
function describeCulprit(culprit: Culprit): string {
  const { value } = culprit;
  if (culprit.cycleTo !== undefined) {
    return `a reference back to ${culprit.cycleTo} (a cycle: this serializer sends trees, the v8 serializer sends cycles)`;
  }
  if (typeof value === 'function') return `a function (${value.name === '' ? 'anonymous' : value.name})`;
  if (typeof value === 'symbol') return `a symbol (${value.toString()})`;
  // Serializers throw these for what they reject on purpose, already described.
  if (culprit.error instanceof SerializationError) return culprit.error.message;
  const reason = culprit.error instanceof Error ? culprit.error.message : String(culprit.error);
  if (typeof value !== 'object' || value === null) return `a ${typeof value} (${reason})`;
  return `${isClassInstance(value) ? `a ${classNameOf(value)}` : 'an object'} (${reason})`;
}
