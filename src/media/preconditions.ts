// The conditional request headers the media route honours (RFC 9110 §13), against the one strong ETag a
// stored file has (`etag` below is always that strong tag, quotes included). Media carries no
// Last-Modified, so date validators never match.

// One list element: OWS and empty elements before it, the tag, OWS, then a comma or the end (§5.6.1, §8.8.3).
const LIST_ELEMENT = /[ \t,]*(?:W\/)?("[\x21\x23-\x7e\x80-\xff]*")[ \t]*(?=,|$)/y;

/**
 * The opaque-tags (quotes included, `W/` dropped) of an entity-tag list, in order. Parsing stops at the
 * first malformed element: what cannot be read never matches.
 */
export function opaqueTags(header: string): string[] {
  const tags: string[] = [];
  LIST_ELEMENT.lastIndex = 0;
  for (let match = LIST_ELEMENT.exec(header); match; match = LIST_ELEMENT.exec(header)) tags.push(match[1]!);
  return tags;
}

/**
 * If-None-Match (§13.1.2) against the current representation's ETag: true when it matches, i.e. a GET or
 * HEAD is answered 304. `*` matches any current representation; otherwise weak comparison over the list
 * (opaque-tags equal, either side may be weak), so a cache revalidating with `W/"<etag>"` still gets a 304.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return opaqueTags(header).includes(etag);
}

/**
 * If-Range (§13.1.5): true when a Range may be honoured. Absent, or exactly our strong ETag (strong
 * comparison: a weak tag never matches, nor a date as we send no Last-Modified); anything else means the
 * client's partial copy is of another representation, so the whole file is sent instead.
 */
export function ifRangeHolds(header: string | undefined, etag: string): boolean {
  return header === undefined || header.trim() === etag;
}
