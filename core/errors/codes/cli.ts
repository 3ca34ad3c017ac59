import { defineCodes } from './spec';

export const CLI_CODES = defineCodes({
  CORL_ERR_CLI_USAGE: {
    cause: 'A command was called with a missing or invalid argument or flag.',
    fix: 'see `corl <command> --help`',
  },
  CORL_ERR_IO: {
    cause:
      'A file could not be read or written (permissions, a full disk, a path that is a folder), or a path names a FIFO, a device, a socket or a kernel file (/proc, /sys) where corl reads or writes data: refused at once instead of blocking on it or reading it for ever.',
    fix: 'check the path and free space; files corl writes are replaced atomically, so earlier contents are intact',
  },
});
