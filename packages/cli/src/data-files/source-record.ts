// One record of a data file, as every format's reader yields it (its own module: the parquet reader,
// loaded by data-formats.ts through a dynamic import, needs the type without importing that file).
import type { ColumnType } from "./column-types.ts";

/** One record of a data file as text cells, the header first; `line` locates it for error messages. */
export type SourceRecord = {
  record: string[];
  line: number;
  /** Bytes of the file read so far (a stream's position, a chunk ahead of the record). */
  bytesRead?: number;
  /** The byte offset just after this record (CSV and TSV). */
  endByte?: number;
  /** On the header: each column's type as the file's schema declares it (parquet). */
  declaredTypes?: ColumnType[];
  /** On the header: the file's row count from its metadata (parquet). */
  totalRows?: number;
};
