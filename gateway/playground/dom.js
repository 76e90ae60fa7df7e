// DOM helpers of the playground page (GET /). Everything a model or tool wrote goes into the page
// through `text`, as text, never as HTML.

/** A new element with an optional class name and text. */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
