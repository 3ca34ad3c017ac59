// Error decoupling between two models answering the same problems once each.
// Definitions (κ, c, w, u): docs/reference/metrics.md "Agreement between agents".

/** Counts of the 2×2 table of right/wrong answers of models A and B. */
export interface AgreementCounts {
  /** Both right. */
  readonly a: number;
  /** Only A right. */
  readonly b: number;
  /** Only B right (c′). */
  readonly c: number;
  /** Both wrong. */
  readonly d: number;
  /** Both wrong with the same answer (a subset of d). */
  readonly dSame: number;
}

/** The paper's error-decoupling statistics. */
export interface Agreement {
  /** Number of problems N. */
  readonly n: number;
  /** Cohen's κ of correctness: (p_o − p_e) / (1 − p_e); 1 when p_e = 1 (both always right or always wrong). */
  readonly kappa: number;
  /** Complementarity c = (b + c′)/N: exactly one of the two is right. */
  readonly complementarity: number;
  /** w: share of problems both get wrong with the same answer (correlated errors). */
  readonly sameWrong: number;
  /** Union coverage u = 1 − d/N: at least one is right. */
  readonly coverage: number;
  /** Accuracy of A and of B. */
  readonly accuracyA: number;
  readonly accuracyB: number;
  /** The table. */
  readonly counts: AgreementCounts;
}

/** Count the table. `sameAnswer[i]` says whether the two answered problem i identically (for w). */
export function agreementCounts(
  correctA: readonly boolean[],
  correctB: readonly boolean[],
  sameAnswer?: readonly boolean[],
): AgreementCounts {
  if (correctA.length !== correctB.length || (sameAnswer && sameAnswer.length !== correctA.length)) {
    throw new RangeError(
      `expected equally long inputs, got ${correctA.length}, ${correctB.length}${sameAnswer ? `, ${sameAnswer.length}` : ''}`,
    );
  }
  let a = 0,
    b = 0,
    c = 0,
    d = 0,
    dSame = 0;
  for (let i = 0; i < correctA.length; i++) {
    const x = correctA[i]!,
      y = correctB[i]!;
    if (x && y) a++;
    else if (x) b++;
    else if (y) c++;
    else {
      d++;
      if (sameAnswer?.[i]) dSame++;
    }
  }
  return { a, b, c, d, dSame };
}

/** κ, c, w and u from a table. An empty table gives zeros (κ = 0). */
export function agreementFromCounts(t: AgreementCounts): Agreement {
  const n = t.a + t.b + t.c + t.d;
  if (n === 0)
    return { n, kappa: 0, complementarity: 0, sameWrong: 0, coverage: 0, accuracyA: 0, accuracyB: 0, counts: t };
  const po = (t.a + t.d) / n;
  const pA = (t.a + t.b) / n;
  const pB = (t.a + t.c) / n;
  const pe = pA * pB + (1 - pA) * (1 - pB);
  const kappa = pe === 1 ? 1 : (po - pe) / (1 - pe);
  return {
    n,
    kappa,
    complementarity: (t.b + t.c) / n,
    sameWrong: t.dSame / n,
    coverage: 1 - t.d / n,
    accuracyA: pA,
    accuracyB: pB,
    counts: t,
  };
}

/** κ, c, w, u between two models' per-problem correctness (and, for w, whether they gave the same answer). */
export function agreement(
  correctA: readonly boolean[],
  correctB: readonly boolean[],
  sameAnswer?: readonly boolean[],
): Agreement {
  return agreementFromCounts(agreementCounts(correctA, correctB, sameAnswer));
}
