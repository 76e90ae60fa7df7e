import { scenarioRequest, type Workload } from './workload.ts';

/**
 * The Conveyor paper's CodeGen workload (Figure 3): the model writes a script that plots a sine
 * wave; the python tool runs it; the model answers with the output. Real numpy + matplotlib when
 * the sandbox's Python has them, else the same shape in pure stdlib.
 */
export const codegen: Workload = {
  name: 'codegen',
  description: 'Plot a sine wave (paper Figure 3): one python code block, then an answer quoting its output.',
  uses: ['python'],
  request: (env) =>
    env.numpy
      ? scenarioRequest(env, 'sine-wave', 'Plot a sine wave in Python.')
      : scenarioRequest(env, 'sine-wave-stdlib', 'Plot a sine wave in Python using only the standard library.'),
};
