/** An item as the document client reads or writes it. */
export type Item = Record<string, unknown>;

/**
 * Reads an item the table gave back as the shape its entity module declares. Every entity's
 * items are written only by that module's `toItem`, so this is the one place the stored shape
 * is taken on trust.
 */
export const asStored = <Stored>(item: Item): Stored => item as Stored;
