import { expect } from 'chai';
import { countDropped, droppedAnswer, expressionOfId } from '../../scripts/dropped';

describe('scripts/dropped (the answer with every carry and borrow forgotten)', () => {
  it('drops carries, the top one included, and borrows, column by column', () => {
    expect(droppedAnswer('37+4')).to.equal(31); // 7+4 = 11: write 1, forget the carry; 3
    expect(droppedAnswer('3+57')).to.equal(50); // 3+7 = 10: write 0; 5
    expect(droppedAnswer('60+81')).to.equal(41); // 0+1 = 1; 6+8 = 14: write 4, forget the carry
    expect(droppedAnswer('52-0-35')).to.equal(27); // 52; 2−5: write 7, forget the borrow; 5−3 = 2
    expect(droppedAnswer('64-2')).to.equal(62); // no carry, no borrow: the right answer
    expect(droppedAnswer('4+76-7')).to.equal(73); // 4+76 → 70; 70−7 → 73 (two slips undo each other)
  });

  it('reads the expression from a problem id, and refuses anything else', () => {
    expect(expressionOfId('test-52-0-35')).to.equal('52-0-35');
    expect(expressionOfId('validation-37+4')).to.equal('37+4');
    expect(() => droppedAnswer('x+1')).to.throw(/expected an expression/);
  });

  it('counts carry/borrow pairs whose dropped answer is wrong, and those whose majority is it', () => {
    const rows = [
      { agent: 0, id: 'test-37+4', majority: '31', reference: '41', category: 'carry' }, // counted, dropped
      { agent: 1, id: 'test-37+4', majority: '41', reference: '41', category: 'carry' }, // counted, right
      { agent: 0, id: 'test-64-2', majority: '62', reference: '62', category: 'plain' }, // plain: skipped
      { agent: 0, id: 'test-4+76-7', majority: '73', reference: '73', category: 'carry+borrow' }, // dropped = right: skipped
      { agent: 0, id: 'test-52-0-35', majority: null, reference: '17', category: 'borrow' }, // counted, no majority
    ];
    expect(countDropped(rows)).to.deep.equal({ pairs: 3, majority: 1 });
  });
});
