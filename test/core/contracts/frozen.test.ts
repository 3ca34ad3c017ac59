import { expect } from 'chai';
import { deepFreeze } from '../../../core/contracts/frozen';

describe('core/contracts/frozen (deepFreeze)', () => {
  it('freezes every object and array at any depth and returns the same value', () => {
    const value = { a: [{ b: { c: [1, 2] } }], d: 'x' };
    expect(deepFreeze(value)).to.equal(value);
    for (const v of [value, value.a, value.a[0]!, value.a[0]!.b, value.a[0]!.b.c])
      expect(Object.isFrozen(v), JSON.stringify(v)).to.equal(true);
    expect(() => (value.a[0]!.b.c as number[]).push(3)).to.throw(TypeError);
  });

  it('reaches depths past the call stack (no recursion) and leaves typed arrays as they are', () => {
    let deep: { next?: unknown; bytes?: Uint8Array } = { bytes: new Uint8Array(2) };
    const inner = deep;
    for (let i = 0; i < 100000; i++) deep = { next: deep };
    deepFreeze(deep);
    expect(Object.isFrozen(inner)).to.equal(true);
    inner.bytes![0] = 7; // a typed array's elements cannot be frozen; it stays usable
    expect(inner.bytes![0]).to.equal(7);
  });

  it('leaves primitives and already frozen values alone', () => {
    expect(deepFreeze(3)).to.equal(3);
    expect(deepFreeze(null)).to.equal(null);
    const inside = { x: 1 };
    const outer = Object.freeze({ inside });
    deepFreeze(outer);
    expect(Object.isFrozen(inside), 'a frozen object is taken as frozen through').to.equal(false);
  });
});
