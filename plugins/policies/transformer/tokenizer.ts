// A character-level tokenizer with a configurable alphabet and optional multi-character tokens
// (matched longest first), so that two model families can tokenize the same text differently.
// Ids: 0 = <|end|> (begins every prompt and ends every completion), 1 = <|unk|>, then the
// multi-character tokens in the given order, then the alphabet's characters.
import { CorlError } from '../../../core/errors';
import type { TransformerOptions } from './options';

/** Tokenizer options (the `tokenizer` option of `corl:transformer`). */
export type TokenizerOptions = TransformerOptions['tokenizer'];

/** Id of the end token (also the first token of every sequence). */
export const END = 0;
/** Id of the unknown-character token. */
export const UNK = 1;

export class CharTokenizer {
  readonly vocab: readonly string[];
  private readonly ids = new Map<string, number>();
  private readonly byLength: string[];

  constructor(readonly options: TokenizerOptions) {
    const chars = [...options.alphabet];
    const seen = new Set<string>();
    for (const c of chars) {
      if (seen.has(c))
        throw new CorlError('CORL_ERR_CONFIG_INVALID', `expected each alphabet character once, got "${c}" twice`, {
          where: 'tokenizer.alphabet',
        });
      seen.add(c);
    }
    for (const t of options.tokens) {
      if ([...t].length < 2)
        throw new CorlError(
          'CORL_ERR_CONFIG_INVALID',
          `expected multi-character tokens of at least 2 characters, got "${t}"`,
          { where: 'tokenizer.tokens' },
        );
      if (seen.has(t))
        throw new CorlError('CORL_ERR_CONFIG_INVALID', `expected each token once, got "${t}" twice`, {
          where: 'tokenizer.tokens',
        });
      seen.add(t);
    }
    this.vocab = ['<|end|>', '<|unk|>', ...options.tokens, ...chars];
    this.vocab.forEach((v, i) => {
      if (i > UNK) this.ids.set(v, i);
    });
    this.byLength = [...options.tokens].sort((a, b) => b.length - a.length);
  }

  /** Vocabulary size. */
  get size(): number {
    return this.vocab.length;
  }

  /** Token ids of a text (no end tokens added); unknown characters become <|unk|>. */
  encode(text: string): number[] {
    const s = this.options.lowercase ? text.toLowerCase() : text;
    const out: number[] = [];
    let i = 0;
    outer: while (i < s.length) {
      for (const t of this.byLength) {
        if (s.startsWith(t, i)) {
          out.push(this.ids.get(t)!);
          i += t.length;
          continue outer;
        }
      }
      const c = String.fromCodePoint(s.codePointAt(i)!);
      out.push(this.ids.get(c) ?? UNK);
      i += c.length;
    }
    return out;
  }

  /** Text of token ids; the end token decodes to nothing, <|unk|> to U+FFFD. */
  decode(ids: readonly number[]): string {
    let s = '';
    for (const id of ids) {
      if (id === END) continue;
      if (id === UNK) s += '\uFFFD';
      else s += this.vocab[id] ?? '\uFFFD';
    }
    return s;
  }

  /** Text of one token, as `decode([id])`. */
  piece(id: number): string {
    return this.decode([id]);
  }

  /** A stable description for checkpoints and family labels. */
  describe(): { alphabet: string; tokens: string[]; lowercase: boolean } {
    return { alphabet: this.options.alphabet, tokens: [...this.options.tokens], lowercase: this.options.lowercase };
  }
}
