import { expect } from 'chai';
import { inlineTask } from '../../../plugins/tasks/inline';

describe('plugins/tasks/inline', () => {
  it('keeps references apart from problems', async () => {
    const t = inlineTask.create(
      {
        train: [{ id: 'a', prompt: 'p', answer: '1', solution: ' s' }],
        heldOut: [{ id: 'b', prompt: 'q', answer: '2' }],
      },
      {} as any,
    ) as any;
    const d = await t.load();
    expect(d.train).to.deep.equal([{ id: 'a', prompt: 'p', variants: undefined }]);
    expect(JSON.stringify(d.train)).to.not.contain('"1"');
    expect(d.groundTruth.get('b').answer).to.equal('2');
    expect(d.groundTruth.size).to.equal(2);
    expect(d.pretrainText).to.deep.equal(['p s']);
  });
  it('resolves image paths against the config folder and leaves rows without images alone', async () => {
    const t = inlineTask.create(
      {
        train: [
          { id: 'a', prompt: 'p', images: ['img/a.png', '/abs/b.jpg'] },
          { id: 'c', prompt: 'q' },
        ],
        heldOut: [],
      },
      { baseDir: '/cfg/dir' } as any,
    ) as any;
    const d = await t.load();
    expect(d.train[0].images).to.deep.equal(['/cfg/dir/img/a.png', '/abs/b.jpg']);
    expect(d.train[1]).to.not.have.property('images');
  });
  it('refuses duplicate ids naming the row', async () => {
    const t = inlineTask.create(
      { train: [{ id: 'a', prompt: 'p' }], heldOut: [{ id: 'a', prompt: 'q' }] },
      {} as any,
    ) as any;
    try {
      await t.load();
      expect.fail();
    } catch (e) {
      expect((e as Error).message)
        .to.contain('CORL_ERR_TASK_DATA')
        .and.contain('task.options.heldOut[0].id');
    }
  });
});
