// The yardstick's reading of /proc/stat (never a timing).
import { expect } from 'chai';
import { cpuTicks, stealShare } from '../../bench/yardstick';

describe('bench yardstick: the steal share from /proc/stat', () => {
  it("reads the aggregate cpu line's first eight columns and divides the steal ticks by all of them", () => {
    const before = cpuTicks(
      'cpu  630688 2253901 317085 2942833 9347 0 3964 3058 0 0\ncpu0 310314 1122701 150339 1492277 2070 0 803 1556 0 0\nintr 1 2\n',
    );
    expect(before).to.deep.equal([630688, 2253901, 317085, 2942833, 9347, 0, 3964, 3058]);
    // 200 ticks pass: 150 user, 30 idle, 20 stolen
    const after = [630838, 2253901, 317085, 2942863, 9347, 0, 3964, 3078];
    expect(stealShare(before!, after)).to.equal(0.1);
    expect(stealShare(after, after)).to.equal(undefined);
    expect(cpuTicks('intr 1 2\n')).to.equal(undefined);
    expect(cpuTicks('cpu  1 2 3\n')).to.equal(undefined);
  });
});
