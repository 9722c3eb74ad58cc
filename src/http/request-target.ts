/**
 * The request target of an HTTP request, parsed without trusting it: `req.url` is whatever the
 * client wrote on its request line, and `new URL()` on it throws (or, for `//name/path`, reads a
 * path as a host name), so every listener parses it here and answers 400 when it is not usable.
 */

export interface RequestTarget {
  /** The path as sent (not decoded, not normalised), without query or fragment. */
  path: string;
  /** The query without its `?`, '' when none. */
  query: string;
  /** Host (and port) of an absolute-form target, which stands in for the `Host` header (RFC 9112 3.2.2). */
  authority: string | undefined;
}

const absoluteForm = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
/** RFC 3986 absolute-path: segments of pchar, each `%` starting an escape of two hex digits. */
const absolutePath = /^(?:\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*)+$/;

/** The target's parts, or null when it is not an origin-form path or an http(s) absolute URL. */
export function parseRequestTarget(raw: string | undefined): RequestTarget | null {
  if (raw === undefined || raw === '') return null;
  if (raw.startsWith('/')) {
    const end = raw.search(/[?#]/);
    const path = end === -1 ? raw : raw.slice(0, end);
    if (!absolutePath.test(path)) return null;
    const query = end !== -1 && raw[end] === '?' ? (raw.slice(end + 1).split('#')[0] ?? '') : '';
    return { path, query, authority: undefined };
  }
  // Authority-form (CONNECT) and asterisk-form (OPTIONS *) are not served by any listener here.
  if (!absoluteForm.test(raw)) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.host === '') return null;
  return { path: url.pathname, query: url.search.slice(1), authority: url.host };
}
