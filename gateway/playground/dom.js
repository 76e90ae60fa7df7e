// DOM helpers of the playground page (GET /). Everything a model or tool wrote goes into the page
// through `text`, as text, never as HTML.

/** A new element with an optional class name and text. */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** `node`'s text, its one text node changed in place: a new node each frame was a new node to a screen reader. */
export function setText(node, text) {
  const only = node.firstChild;
  if (only !== null && only === node.lastChild && only.nodeType === Node.TEXT_NODE) {
    if (only.data !== text) only.data = text;
  } else node.textContent = text;
}
