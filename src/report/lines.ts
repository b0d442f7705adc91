/** What a report of results, notes and warnings needs of the output: results on stdout, warnings and
 *  errors on stderr. cli/Output provides it. */
export interface Lines {
  out(text: string): void;
  warn(text: string): void;
  error(text: string): void;
}
