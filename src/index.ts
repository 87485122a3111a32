/** ccjs: CCJ-style object-based message passing and collective communication for Node.js. */
export { ColGroupMaster } from '../groups/col-group-master.js';
export { ColGroup } from '../groups/col-group.js';
export { InactiveGroup } from '../groups/inactive-group.js';
export { ColMember } from './member.js';
export type { MasterOptions, TransportName, SerializerName } from './config.js';
export type { Serializer } from './serialization/serializer.js';
export { registerClass } from './serialization/registry.js';
export { MsgpackSerializer } from './serialization/msgpack.js';
export { V8Serializer } from './serialization/v8.js';
export { CCJError, GroupError, TimeoutError, PeerLostError, SerializationError, TransportError, ConfigError, AbortError } from './errors.js';
