// The playground's example prompts (GET /): buttons that fill the prompt box. Plain browser
// JavaScript, no build step.

import { el } from './dom.js';

/** Prompts the built-in simulator has scenarios for (the benchmark's workloads); any model can take them. */
export const EXAMPLES = [
  { label: 'Python: sine wave', prompt: 'Plot a sine wave in Python using only the standard library.' },
  { label: 'Search ×3', prompt: 'Find hello world programs in Python, C++ and Java.', tools: ['search'] },
  { label: 'Plan', prompt: 'How many hello-world pages are there for Python and for Java together?', extra: { tool_parser: 'llmcompiler-plan' } },
  { label: 'Validation (rejected)', prompt: 'What is the local news in Paris?', tools: ['local_news'] },
  { label: 'Database', prompt: 'List all employees in the database.', tools: ['database'] },
  { label: 'Calculator', prompt: 'What is 200*701?', tools: ['calculator'] },
];

/**
 * One button per example in `box`; a click puts its prompt in `prompt` and calls `onPick` with
 * it (its tools and extra fields go with the request that sends that prompt).
 */
export function showExamples(box, prompt, onPick) {
  for (const example of EXAMPLES) {
    const button = el('button', undefined, example.label);
    button.type = 'button';
    button.addEventListener('click', () => {
      onPick(example);
      prompt.value = example.prompt;
      prompt.focus();
    });
    box.append(button);
  }
}
