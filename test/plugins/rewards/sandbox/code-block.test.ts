import { expect } from 'chai';
import { lastCodeBlock } from '../../../../plugins/rewards/sandbox/code-block';

describe('plugins/rewards/sandbox/code-block', () => {
  it('takes the last complete python (or untagged) fenced block', () => {
    expect(lastCodeBlock('a\n```python\nx = 1\n```\nb\n```\ny = 2\n```\n')).to.equal('y = 2\n');
    expect(lastCodeBlock('```py\nprint(1)\n```')).to.equal('print(1)\n');
    expect(lastCodeBlock('```python\nx = 1\n```\n```js\nlet y\n```')).to.equal('x = 1\n');
  });
  it('ignores an unclosed last fence, fences inside a line and empty blocks', () => {
    expect(lastCodeBlock('```python\nx = 1\n```\n```python\ntruncated')).to.equal('x = 1\n');
    expect(lastCodeBlock('use ```inline``` code')).to.equal(null);
    expect(lastCodeBlock('```\n   \n```')).to.equal(null);
    expect(lastCodeBlock('no code')).to.equal(null);
    expect(lastCodeBlock('  ```python\nz = 3\n  ```')).to.equal('z = 3\n  ');
  });
  it('is linear on hostile input', () => {
    expect(lastCodeBlock('x```'.repeat(200_000))).to.equal(null);
    expect(lastCodeBlock('```\n'.repeat(200_000))).to.equal(null);
  });
});
