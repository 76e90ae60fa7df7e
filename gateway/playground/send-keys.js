// The playground's (GET /) key that sends: Ctrl+Enter (⌘+Enter on a Mac). Plain browser
// JavaScript, no build step.

/**
 * Ctrl+Enter or ⌘+Enter in `prompt` submits `form` as `send` would. Enter writes a new line
 * (prompts are often several); the key that sends is said where a first-time reader looks, the
 * box's placeholder, and to assistive technology. `whileBusy` is called when the key is pressed
 * over a question while `send` is disabled (an answer streams): nothing happened, and the question
 * sat in its box as if it had gone.
 */
export function bindSendKeys({ form, prompt, send, whileBusy }) {
  const keys = /^Mac|^iP/.test(navigator.platform) ? '⌘+Enter' : 'Ctrl+Enter';
  prompt.placeholder = `Ask something, or pick an example above (${keys} sends)`;
  prompt.setAttribute('aria-keyshortcuts', 'Control+Enter Meta+Enter');
  send.title = `Send (${keys})`;
  prompt.addEventListener('keydown', (event) => {
    // The key does what the button does, nothing while it is disabled: requestSubmit checked the
    // prompt box the last send emptied, and "Please fill out this field" came up over a question
    // whose answer was streaming.
    if (event.key !== 'Enter' || !(event.ctrlKey || event.metaKey)) return;
    if (!send.disabled) form.requestSubmit();
    else if (prompt.value.trim() !== '') whileBusy?.();
  });
}
