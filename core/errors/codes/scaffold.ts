import { defineCodes } from './spec';

export const SCAFFOLD_CODES = defineCodes({
  CORL_ERR_SCAFFOLD_KIND: {
    cause: '`create-corl-plugin` was given a plugin kind it has no template for (or none, off a terminal).',
    fix: 'pass `--kind` with one of the kinds listed: reward, topology, diversity, extractor, policy, task, interaction, judge',
  },
  CORL_ERR_SCAFFOLD_NAME: {
    cause:
      '`create-corl-plugin` was given a plugin name that is not `scope:name` in lowercase, uses the reserved `corl:` scope, or a package name npm would refuse.',
    fix: 'use a name like `lab:length-penalty` (lowercase letters, digits, `-`, `.`, `_`; the scope `corl:` is reserved for built-ins) and a lowercase package name',
  },
  CORL_ERR_SCAFFOLD_CORL: {
    cause:
      'The `--corl` value of `create-corl-plugin` or `corl init` is none of `file`, `registry`, `tarball:<path>` or an npm spec, names a tarball that does not exist, or is `file` for the standalone create-corl-plugin package, which holds no corl.',
    fix: 'pass `--corl file` (the corl running the scaffolder), `--corl registry`, `--corl tarball:<path to corl-x.y.z.tgz>` (made by `npm pack`), or an npm spec such as `^0.1.0`',
  },
  CORL_ERR_SCAFFOLD_TARGET: {
    cause:
      'The target folder of `create-corl-plugin` is not empty (or is a file), so generating into it could overwrite work.',
    fix: 'pick a new or empty folder, or pass `--force` to write into it anyway (existing files with the same names are replaced)',
  },
  CORL_ERR_SCAFFOLD_TEMPLATE: {
    cause: 'The template folder of the requested kind is missing or incomplete in this corl installation.',
    fix: 'reinstall corl (the `templates/` folder ships with the package), or run from a complete corl checkout',
  },
});
