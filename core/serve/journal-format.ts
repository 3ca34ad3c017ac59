// The journal's format versions: what a line of each version looks like and how it is read back.
// Version 2 (written): a header with generation, record count and exchange state, then records
// numbered `q` 1, 2, … each with a CRC-32 `c`; version 1 (read, then rewritten as version 2): plain
// JSONL without numbers or checksums, read by `scanLegacy`. `journal.ts` holds the file, its seal,
// appends and compaction; it asks this module what a line means.
import { crc32 } from 'node:zlib';
import { CorlError } from '../errors';
import type { JournalHeader, JournalRecord, ServeIdentity } from './journal';

/** The format version this code writes (it also reads version 1, which had no checksums). */
export const JOURNAL_VERSION = 2;

/** Checksum suffix of every line: `,"c":"<8 hex>"}` replaces the closing brace. */
export const SUFFIX = /,"c":"([0-9a-f]{8})"\}$/;
const SUFFIX_LENGTH = 16;

function hex(text: string): string {
  return crc32(text).toString(16).padStart(8, '0');
}

/** One line (with its newline) of an object: its JSON with the checksum of the bytes before `,"c"` as the last field. Exposed for tests and tools. */
export function encodeLine(value: object): string {
  const json = JSON.stringify(value);
  const body = json.slice(0, -1);
  return `${body},"c":"${hex(body)}"}\n`;
}

/** The checksum a line carries if it verifies, else undefined. */
export function verifyLine(line: string): string | undefined {
  const m = SUFFIX.exec(line);
  if (!m) return undefined;
  return hex(line.slice(0, -SUFFIX_LENGTH)) === m[1] ? m[1] : undefined;
}

export function journalError(
  code:
    | 'CORL_ERR_SERVE_JOURNAL'
    | 'CORL_ERR_SERVE_JOURNAL_VERSION'
    | 'CORL_ERR_SERVE_JOURNAL_CORRUPT'
    | 'CORL_ERR_SERVE_JOURNAL_ORDER'
    | 'CORL_ERR_SERVE_JOURNAL_TRUNCATED'
    | 'CORL_ERR_SERVE_JOURNAL_FILE',
  message: string,
  file: string,
  line?: number,
): CorlError {
  return new CorlError(code, message, { where: line === undefined ? file : `${file}:${line}` });
}

/** One line of a file read in chunks: its text (without the newline), 1-based number, and byte offset of its end (after the newline). */
export interface FileLine {
  readonly text: string;
  readonly no: number;
  readonly end: number;
}

/** What reading a journal found, beyond its records. */
export interface Scan {
  readonly header?: JournalHeader;
  /** Format version 1 (no checksums). */
  readonly legacy: boolean;
  /** Checksum of the header line (which generation the seal belongs to). */
  readonly id: string;
  readonly count: number;
  readonly tornTail: boolean;
  readonly notes: string[];
  /** Bytes up to the end of the last record kept (a torn tail starts there). */
  readonly goodBytes: number;
  /** Bytes of the whole file. */
  readonly bytes: number;
}

/** Version 1: plain JSONL without sequence numbers or checksums; read as before, rewritten as version 2. */
export function scanLegacy(
  file: string,
  first: FileLine,
  lines: Generator<FileLine, { tail: number }, undefined>,
  visit: (record: JournalRecord, line: number, header: JournalHeader | undefined) => void,
): Scan {
  let count = 0;
  let goodBytes = first.end;
  let next = lines.next();
  for (; !next.done; next = lines.next()) {
    const { text, no } = next.value;
    if (text.trim() === '') continue;
    let r: unknown;
    try {
      r = JSON.parse(text);
    } catch {
      throw journalError(
        'CORL_ERR_SERVE_JOURNAL_CORRUPT',
        `expected a JSON record at line ${no} of ${file}, got ${JSON.stringify(text.slice(0, 60))}`,
        file,
        no,
      );
    }
    count++;
    goodBytes = next.value.end;
    visit(r as JournalRecord, no, undefined);
  }
  return {
    legacy: true,
    id: '',
    count,
    tornTail: next.value.tail > 0,
    goodBytes,
    bytes: goodBytes + next.value.tail,
    notes: [
      `journal: ${file} is in format version 1 (no sequence numbers or checksums, so truncation could not be checked); it is rewritten as version ${JOURNAL_VERSION}`,
    ],
  };
}

/** A journal's header line as parsed, before its fields are checked. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a line read from disk, checked field by field
export type ParsedHeader = Record<string, any>;

/** Line 1 of a journal: a header of this serve identity (agents, topology, reward), version 1 or current. */
export function readHeader(file: string, line: string, identity: ServeIdentity): ParsedHeader {
  let head: ParsedHeader | undefined;
  try {
    head = JSON.parse(line);
  } catch {
    head = undefined;
  }
  if (!head || typeof head !== 'object' || head.t !== 'open') {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL',
      `expected a journal header ({"t":"open",…}) at line 1 of ${file}, got ${JSON.stringify(line.slice(0, 60))}`,
      file,
      1,
    );
  }
  if (head.v !== 1 && head.v !== JOURNAL_VERSION) {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_VERSION',
      `expected a journal of format version 1 or ${JOURNAL_VERSION}, got version ${JSON.stringify(head.v)} in ${file}`,
      file,
      1,
    );
  }
  const same =
    JSON.stringify(head.agents) === JSON.stringify(identity.agents) &&
    head.topology === identity.topology &&
    head.reward === identity.reward;
  if (!same) {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL',
      `expected a journal of agents [${identity.agents.join(', ')}] with ${identity.topology} and ${identity.reward}, got one of agents [${(Array.isArray(head.agents) ? head.agents : []).join(', ')}] with ${head.topology} and ${head.reward}`,
      file,
      1,
    );
  }
  return head;
}

/** A current-version header: its checksum passes and it carries gen, records and the exchange state. */
export function checkHeaderV2(file: string, line: string, head: ParsedHeader): JournalHeader {
  if (
    verifyLine(line) === undefined ||
    !Number.isSafeInteger(head.gen) ||
    head.gen < 1 ||
    !Number.isSafeInteger(head.records) ||
    head.records < 0 ||
    !head.exchange ||
    !Number.isSafeInteger(head.exchange.newest) ||
    !Number.isSafeInteger(head.exchange.maxStepsAhead)
  ) {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_CORRUPT',
      `expected the header of ${file} to pass its checksum and carry gen, records and exchange, got ${JSON.stringify(line.slice(0, 80))}`,
      file,
      1,
    );
  }
  return head as JournalHeader;
}

/**
 * The record on `line` (number `expected` of its generation): it passes its checksum and carries
 * that sequence number. A damaged `last` line is a torn tail (undefined); an earlier one is refused.
 */
export function readRecord(file: string, line: FileLine, expected: number, last: boolean): JournalRecord | undefined {
  const no = line.no;
  if (verifyLine(line.text) === undefined) {
    // The final line may be damaged by a crash during its write even with its newline present
    // (an unflushed page): it is a torn tail like a line without newline. Earlier ones are not.
    if (last) return undefined;
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_CORRUPT',
      `expected the record at line ${no} of ${file} to pass its checksum, got ${JSON.stringify(line.text.slice(0, 60))}: the file was changed or damaged in the middle`,
      file,
      no,
    );
  }
  let r: { q?: unknown; c?: unknown } | null;
  try {
    r = JSON.parse(line.text);
  } catch {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_CORRUPT',
      `expected a JSON record at line ${no} of ${file}, got ${JSON.stringify(line.text.slice(0, 60))}`,
      file,
      no,
    );
  }
  if (r?.q !== expected) {
    const what =
      typeof r?.q === 'number' && r.q > expected
        ? `record ${r.q}: records ${expected}${r.q - 1 > expected ? `–${r.q - 1}` : ''} are missing`
        : `record ${JSON.stringify(r?.q)}: lines are out of order or repeated`;
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_ORDER',
      `expected record ${expected} at line ${no} of ${file}, got ${what}`,
      file,
      no,
    );
  }
  delete r.q;
  delete r.c;
  return r as JournalRecord;
}
