/**
 * What one edge list's pages were at its last complete read: per page (where it starts, how
 * large it was asked), the digest of its bytes and the summaries kept of it. A manager's list is
 * read every sync interval and is mostly the same as the last time; a page of 1024 summaries is
 * about 2.3 MB of XML (a 6.4 manager's), whose parse costs tens of milliseconds, where its digest
 * costs one: a page whose bytes are the same as last time is not parsed again, nor decoded (its
 * digest is taken of the bytes as they arrived). The memory of one
 * list is one digest per page and the summaries the list keeps anyway. One fetch at a time uses a
 * memo (the edge list cache shares one fetch per manager).
 */
import type { EdgePage, EdgePageAnswer, EdgePageMemo } from "./types.ts";

interface Remembered {
  digest: string;
  page: EdgePage;
}

export class EdgePages implements EdgePageMemo {
  #pages = new Map<string, Remembered>();
  /** the pages of the fetch in progress */
  #reading = new Map<string, Remembered>();

  /**
   * The page at `startIndex` of `pageSize` whose answer is `answer`: the one remembered there when
   * its bytes are the same, else `parse(answer.body)`.
   */
  page(
    startIndex: number,
    pageSize: number,
    answer: EdgePageAnswer,
    parse: (body: string) => EdgePage,
  ): EdgePage {
    const at = `${startIndex}/${pageSize}`;
    const digest = answer.digest();
    const known = this.#pages.get(at);
    const page = known?.digest === digest ? known.page : parse(answer.body);
    this.#reading.set(at, { digest, page });
    return page;
  }

  /** The fetch read every page: what it read is remembered, the pages it did not read are forgotten. */
  complete(): void {
    this.#pages = this.#reading;
    this.#reading = new Map();
  }

  /** The fetch failed: what it read is dropped, the last complete read is kept. */
  abandon(): void {
    this.#reading = new Map();
  }
}
