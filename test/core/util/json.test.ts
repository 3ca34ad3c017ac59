import { expect } from 'chai';
import { depthOf, MAX_JSON_DEPTH, parseJson, tooDeep } from '../../../core/util/json';

describe('core/util/json (nesting limits of JSON read from users)', () => {
  it('finds where a text first nests past the limit, by line and column', () => {
    expect(tooDeep('[[[1]]]', 3)).to.equal(undefined);
    expect(tooDeep('[[[[1]]]]', 3)).to.deep.equal({ line: 1, column: 4 });
    expect(tooDeep('{\n  "a": {\n    "b": [1]\n  }\n}', 2)).to.deep.equal({ line: 3, column: 10 });
    // Closing brackets bring the depth back: siblings do not add up.
    expect(tooDeep('[[1],[2],[3],[4]]', 2)).to.equal(undefined);
  });

  it('skips brackets in strings (with escaped quotes) and in // and /* */ comments', () => {
    expect(tooDeep('["[[[[", "\\"[[[[", 1]', 1)).to.equal(undefined);
    expect(tooDeep('// [[[[[[\n[1] /* {{{{{{\n }}} */', 1)).to.equal(undefined);
    expect(tooDeep('/* [ */ [[1]]', 1)).to.deep.equal({ line: 1, column: 10 });
  });

  it('parseJson refuses past the limit with a SyntaxError saying where, and parses anything within it', () => {
    const deep = '['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1);
    expect(() => parseJson(deep)).to.throw(
      SyntaxError,
      `nested more than ${MAX_JSON_DEPTH} levels deep at line 1, column ${MAX_JSON_DEPTH + 1}`,
    );
    expect(parseJson('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH))).to.be.an('array');
    expect(parseJson('{"a": [1, {"b": "[[["}]}')).to.deep.equal({ a: [1, { b: '[[[' }] });
    expect(() => parseJson('{')).to.throw(SyntaxError);
  });

  it('depthOf counts a value without recursion, also 100,000 deep', () => {
    expect(depthOf(1)).to.equal(0);
    expect(depthOf({ a: [1, { b: [] }] })).to.equal(4);
    let v: unknown = 0;
    for (let i = 0; i < 100000; i++) v = [v];
    expect(depthOf(v)).to.equal(MAX_JSON_DEPTH + 1);
    expect(depthOf(v, 1e6)).to.equal(100000);
  });
});
