// The few DOM helpers every page uses.

export const $ = id => document.getElementById(id);

// An element with a class and a text (the text is text, never HTML).
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}
