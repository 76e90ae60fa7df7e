import { Parser } from 'htmlparser2';

/** One titled part of a page: a `<section id>` (Sphinx, most doc generators) or the page itself. */
export interface PageSection {
  /** The section's element id, for a `#fragment` link; undefined for text outside any section. */
  id: string | undefined;
  /** The section's first heading, or '' when it has none. */
  heading: string;
  /** Its own text (not its subsections'), whitespace collapsed. */
  text: string;
}

export interface PageText {
  /** The `<title>`, or the first heading when there is no title. */
  title: string;
  /** The first `<h1>` of the content, '' if none. */
  h1: string;
  sections: PageSection[];
}

/** Elements whose text is never content (the title is read separately, also from a page without `head`). */
const SKIPPED = new Set(['head', 'title', 'script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'canvas', 'button', 'select']);
/** Page chrome, skipped when the page does not mark its main content. */
const CHROME = new Set(['nav', 'header', 'footer', 'aside']);
/** Elements that end a word: without a break, "<li>a</li><li>b</li>" would index as "ab". */
const BLOCKS = new Set([
  'address', 'article', 'blockquote', 'br', 'caption', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure', 'h1', 'h2', 'h3',
  'h4', 'h5', 'h6', 'hr', 'li', 'main', 'ol', 'p', 'pre', 'section', 'table', 'td', 'th', 'tr', 'ul',
]);
const HEADING = /^h[1-6]$/;
// A cheap pre-scan: when a page marks its main content, everything outside it is chrome.
const MAIN_MARK = /<main[\s>]|\srole\s*=\s*["']?main\b/i;

interface Open {
  name: string;
  skip: boolean;
  main: boolean;
  section: boolean;
}

/**
 * Extracts a page's searchable text with htmlparser2's streaming parser: the content inside
 * `<main>` / `role="main"` (or the whole body without nav/header/footer when the page marks
 * none), split at `<section id>` elements, without scripts, styles or Sphinx's "¶" permalinks.
 */
export function extractPageText(html: string): PageText {
  const mainOnly = MAIN_MARK.test(html);
  const stack: Open[] = [];
  let skipDepth = 0;
  let mainDepth = 0;
  let inTitle = false;
  let title = '';
  let h1 = '';
  let headingLevel = 0;
  let headingText = '';
  const root: Draft = { id: undefined, heading: '', parts: [] };
  const drafts: Draft[] = [root];
  const open: Draft[] = [root];

  const current = (): Draft => open[open.length - 1]!;
  const inContent = (): boolean => skipDepth === 0 && (!mainOnly || mainDepth > 0);

  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const cls = ` ${attribs['class'] ?? ''} `;
        const skip = SKIPPED.has(name) || (!mainOnly && CHROME.has(name)) || cls.includes(' headerlink ');
        const main = name === 'main' || attribs['role'] === 'main';
        const id = attribs['id'];
        const section = id !== undefined && inContent() && (name === 'section' || (name === 'div' && cls.includes(' section ')));
        stack.push({ name, skip, main, section });
        if (skip) skipDepth += 1;
        if (main) mainDepth += 1;
        // An inline SVG's <title> names an icon, not the page: it was glued onto the page's title.
        if (name === 'title' && !stack.some((o) => o.name === 'svg' || o.name === 'math')) inTitle = true;
        if (section) {
          const draft: Draft = { id, heading: '', parts: [] };
          drafts.push(draft);
          open.push(draft);
        }
        if (HEADING.test(name) && headingLevel === 0 && inContent()) {
          headingLevel = Number(name[1]);
          headingText = '';
        }
        if (BLOCKS.has(name) && inContent()) current().parts.push(' ');
      },
      ontext(text) {
        if (inTitle) title += text;
        if (!inContent()) return;
        current().parts.push(text);
        if (headingLevel > 0) headingText += text;
      },
      onclosetag(name) {
        // htmlparser2 reports a close (real or implied) for every open, innermost first.
        const top = stack.pop();
        if (top === undefined) return;
        if (top.skip) skipDepth -= 1;
        if (top.main) mainDepth -= 1;
        if (name === 'title') inTitle = false;
        if (BLOCKS.has(name) && inContent()) current().parts.push(' ');
        if (HEADING.test(name) && headingLevel === Number(name[1])) {
          const heading = collapse(headingText);
          if (current().heading === '') current().heading = heading;
          if (h1 === '' && name === 'h1') h1 = heading;
          headingLevel = 0;
        }
        if (top.section) open.pop();
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();

  const sections = drafts
    .map((d) => ({ id: d.id, heading: d.heading, text: collapse(d.parts.join('')) }))
    .filter((s) => s.text !== '');
  return { title: collapse(title) || h1, h1, sections };
}

interface Draft {
  id: string | undefined;
  heading: string;
  parts: string[];
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
