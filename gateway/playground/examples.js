// The playground's example prompts (GET /): buttons that fill the prompt box. Plain browser
// JavaScript, no build step.

import { el } from './dom.js';

/**
 * Prompts the built-in simulator has scenarios for (the benchmark's workloads); any model can take
 * them. `needs`: the gateway's tools the example runs (a plan's steps call three of them).
 */
export const EXAMPLES = [
  { label: 'Python: sine wave', prompt: 'Plot a sine wave in Python using only the standard library.', needs: ['python'] },
  { label: 'Search ×3', prompt: 'Find hello world programs in Python, C++ and Java.', tools: ['search'], needs: ['search'] },
  { label: 'Plan', prompt: 'How many hello-world pages are there for Python and for Java together?', extra: { tool_parser: 'llmcompiler-plan' }, needs: ['plan', 'search', 'calculator', 'format'] },
  { label: 'Validation (rejected)', prompt: 'What is the local news in Paris?', tools: ['local_news'], needs: ['local_news'] },
  { label: 'Database', prompt: 'List all employees in the database.', tools: ['database'], needs: ['database'] },
  { label: 'Calculator', prompt: 'What is 200*701?', tools: ['calculator'], needs: ['calculator'] },
];

/**
 * Disables each of `box`'s example buttons whose tools are not all among `tools` (the gateway's,
 * from GET /health), saying which are missing. A built-in turned off in the gateway's config left
 * its example offered: "Search ×3" then sent `search` as a client tool the page does not run.
 */
export function offerExamples(box, tools) {
  const have = new Set(tools);
  [...box.querySelectorAll('button')].forEach((button, i) => {
    const missing = EXAMPLES[i].needs.filter((name) => !have.has(name));
    // aria-disabled, not disabled: a disabled button takes no focus, so a keyboard or screen
    // reader user never reached the title that says which tool is missing. The click does nothing.
    button.setAttribute('aria-disabled', String(missing.length > 0));
    button.title = missing.length === 0 ? '' : `needs the ${missing.join(' and ')} tool${missing.length === 1 ? '' : 's'}, which this gateway does not run`;
  });
}

/**
 * One button per example in `box`; a click puts its prompt in `prompt` and calls `onPick` with
 * it (its tools and extra fields go with the request that sends that prompt).
 */
export function showExamples(box, prompt, onPick) {
  for (const example of EXAMPLES) {
    const button = el('button', undefined, example.label);
    button.type = 'button';
    button.addEventListener('click', () => {
      if (button.getAttribute('aria-disabled') === 'true') return;
      onPick(example);
      prompt.value = example.prompt;
      prompt.focus();
    });
    box.append(button);
  }
}
