/** A page of a list: which one, and how many items per page (docs/api.md "Listing logs"). */
export interface Paging {
  page: number;
  pageSize: number;
}

/** The offset of the page's first item. */
export const pageOffset = (paging: Paging) => (paging.page - 1) * paging.pageSize;
