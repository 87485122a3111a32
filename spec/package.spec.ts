import { expect } from 'chai';
import { CCJError, GroupError } from '../src/index.js';

describe('the built package', function () {
  it("exports the public API under the name 'ccjs'", async function () {
    // A variable, so that the compiler does not need dist/ to exist before it builds it.
    const packageName = 'ccjs';
    const ccjs = (await import(packageName)) as Record<string, unknown>;
    const names = ['ColGroupMaster', 'ColGroup', 'ColMember', 'InactiveGroup', 'registerClass', 'MsgpackSerializer', 'V8Serializer', 'Reductions', 'DividableArray', 'DenseMatrix', 'SparseMatrix'];
    const errors = ['CCJError', 'GroupError', 'TimeoutError', 'PeerLostError', 'SerializationError', 'TransportError', 'ConfigError', 'CollectiveMismatchError'];
    for (const name of [...names, ...errors]) {
      expect(ccjs, name).to.have.property(name);
    }
    // The package entry and the sources the tests use are one module graph.
    expect(ccjs.GroupError).to.equal(GroupError);
    expect(new GroupError('x')).to.be.instanceOf(CCJError);
  });
});
