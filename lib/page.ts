/** One page of a listing, as the domain and its stores pass it; the cursor is opaque to callers. */
export interface Page<T> {
  items: T[];
  /** Opaque; present when there may be more. */
  nextCursor?: string;
}

export interface PageRequest {
  limit: number;
  cursor?: string;
}
