/** The serialization module: serializers, class registration and the packet codec. */
import { ConfigError } from '../base/errors.js';
import { MsgpackSerializer } from './msgpack.js';
import type { SerializerOptions } from './registry.js';
import type { Serializer } from './serializer.js';
import { V8Serializer } from './v8.js';

export type { Serializer } from './serializer.js';
export { MsgpackSerializer } from './msgpack.js';
export { V8Serializer } from './v8.js';
export {
  registerClass,
  classByConstructor,
  classByName,
  isRegistered,
  type ClassConstructor,
  type RegisteredClass,
  type SerializerOptions,
} from './registry.js';
export { typeCodeOf, viewBytes, fromBytes, DEFAULT_OUT_OF_BAND_THRESHOLD, type BinaryValue, type TypeCode } from '../base/typed-arrays.js';
export { encodeMessage, decodeMessage } from './message.js';

/** The serializer a configuration names, or the caller's own (whose options are its own business). */
export function createSerializer(choice: 'msgpack' | 'v8' | Serializer, options: SerializerOptions = {}): Serializer {
  switch (choice) {
    case 'msgpack':
      return new MsgpackSerializer(options);
    case 'v8':
      return new V8Serializer(options);
    default:
      // Configuration may come from untyped sources (environment, files).
      if (typeof choice !== 'object' || choice === null) throw new ConfigError(`unknown serializer '${String(choice)}' (use 'msgpack' or 'v8')`);
      return choice;
  }
}
