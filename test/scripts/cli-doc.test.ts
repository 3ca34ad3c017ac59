import { expect } from 'chai';
import { buildProgram } from '../../core/cli/main';
import { cliReference, helpText } from '../../scripts/cli-doc';

describe('scripts/cli-doc (docs/reference/cli.md from the commander programs)', () => {
  it('has a section with the full help of every corl command, nested ones included, and of create-corl-plugin', () => {
    const page = cliReference();
    const walk = (cmd: ReturnType<typeof buildProgram>, prefix: string): void => {
      for (const c of cmd.commands) {
        expect(page).to.contain(`### ${prefix} ${c.name()}\n`);
        expect(page).to.contain(`Usage: ${prefix} ${c.name()}`);
        walk(c, `${prefix} ${c.name()}`);
      }
    };
    walk(buildProgram(), 'corl');
    expect(page)
      .to.contain('## create-corl-plugin')
      .and.contain('Usage: create-corl-plugin [options] [dir]')
      .and.contain('--toolchain <mode>');
  });

  it('help text includes what commands add after it (examples) and has no trailing spaces', () => {
    const train = buildProgram().commands.find((c) => c.name() === 'train')!;
    const text = helpText(train);
    expect(text).to.contain('Examples:\n  corl train -c');
    expect(/[ \t]$/m.test(text)).to.equal(false);
  });
});
