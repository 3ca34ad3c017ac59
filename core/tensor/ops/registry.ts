// Every operator of the graph IR, by name.
import { CorlError } from '../../errors';
import { ELEMENTWISE_OPS } from './elementwise';
import { MATMUL } from './linalg';
import { NN_OPS } from './nn';
import { REDUCE_OPS } from './reduce';
import { SHAPE_OPS } from './shape';
import type { OpDef } from './types';

let table: Map<string, OpDef> | undefined;

function ops(): Map<string, OpDef> {
  table ??= new Map([...ELEMENTWISE_OPS, MATMUL, ...SHAPE_OPS, ...REDUCE_OPS, ...NN_OPS].map((d) => [d.name, d]));
  return table;
}

/** The definition of an operator. */
export function getOp(name: string): OpDef {
  const d = ops().get(name);
  if (!d)
    throw new CorlError('CORL_ERR_TENSOR_GRAPH', `expected a known operator, got "${name}"`, {
      hint: `known operators: ${[...ops().keys()].join(', ')}`,
    });
  return d;
}

/** Names of every operator. */
export function opNames(): string[] {
  return [...ops().keys()];
}
