/**
 * What a browser reads from an HTML page's first bytes before it parses it: whether an untyped
 * body is HTML at all, and which charset the page declares in itself.
 */

/** Bytes a browser's prescan reads for a <meta> charset (the HTML standard's 1024). */
const PRESCAN_BYTES = 1024;

/**
 * The tag openings by which the WHATWG MIME sniffing standard takes an untyped body for HTML, each
 * followed by a space or '>' (so `<pre-release` stays text), after leading whitespace.
 */
const HTML_SIGNATURE = /^[\t\n\f\r ]*(?:<!doctype html|<html|<head|<script|<iframe|<h1|<div|<font|<table|<a|<style|<title|<b|<body|<br|<p|<!--)[ >]/i;

/**
 * HTML by the sniffing standard's signatures. Only for a body the server sent without a content
 * type: a declared text/plain is shown as the server meant it, as a browser does.
 */
export function sniffsAsHtml(body: Buffer): boolean {
  return HTML_SIGNATURE.test(body.subarray(0, PRESCAN_BYTES).toString('latin1'));
}

/** A <meta> tag's attributes; a quoted value may hold '>'. */
const META_TAG = /<meta\s((?:[^>"']|"[^"]*"|'[^']*')*)>/gi;
const ATTRIBUTE = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
const CONTENT_CHARSET = /charset\s*=\s*["']?\s*([\w.:-]+)/i;

/**
 * The charset an HTML page declares in itself (`<meta charset>`, or `<meta http-equiv
 * content-type>`), for a server that names none in Content-Type: many older pages declare
 * windows-1252 only there, and read as UTF-8 every accented letter became U+FFFD. Only those two
 * attributes count, as in the standard's prescan: a description that mentions "charset=" does
 * not. A page's UTF-16 claim is read as UTF-8, as browsers do: its bytes got this far as ASCII.
 */
export function metaCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, PRESCAN_BYTES).toString('latin1');
  for (const [, attributes] of head.matchAll(META_TAG)) {
    const values = new Map<string, string>();
    for (const [, name, double, single, bare] of attributes!.matchAll(ATTRIBUTE)) {
      const key = name!.toLowerCase();
      if (!values.has(key)) values.set(key, double ?? single ?? bare ?? '');
    }
    const content = values.get('http-equiv')?.toLowerCase() === 'content-type' ? values.get('content') : undefined;
    const label = (values.get('charset') ?? (content === undefined ? undefined : CONTENT_CHARSET.exec(content)?.[1]))?.trim().toLowerCase();
    if (label) return label.startsWith('utf-16') ? 'utf-8' : label;
  }
  return undefined;
}
