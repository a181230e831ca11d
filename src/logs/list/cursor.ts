/**
 * The list's keyset cursor (docs/api.md "Keyset paging"): the place after the last log of a page in the
 * time order, (timestamp, id), as an opaque text. A page read after it starts at the next log, however
 * many logs arrived since: no page skips or repeats a log, unlike page numbers over a growing list.
 */
import { AppError } from '../../errors.js';

export interface ListCursor {
  timestamp: number;
  id: number;
}

export const formatCursor = (c: ListCursor): string => Buffer.from(`${c.timestamp}.${c.id}`).toString('base64url');

/** The cursor a `cursor` parameter holds; anything not made by formatCursor is a 400 naming `param`. */
export function parseCursor(raw: string, param: string): ListCursor {
  const match = /^(\d{1,16})\.(\d{1,16})$/.exec(Buffer.from(raw, 'base64url').toString('latin1'));
  const timestamp = Number(match?.[1]);
  const id = Number(match?.[2]);
  if (!match || !Number.isSafeInteger(timestamp) || !Number.isSafeInteger(id)) {
    throw new AppError(
      400,
      'invalid_parameter',
      `${param} is not a cursor of this list; use next_cursor from a list answer as it is.`,
      param,
    );
  }
  return { timestamp, id };
}
