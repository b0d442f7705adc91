/** The one shell-quoting rule (docs/decisions.md, "A hint's command runs as written"): every command
 *  revsync suggests (a plan reason's hint, a lock's unlock, init's steps) names outside text (a policy's
 *  name from the service, a file id, an environment's name, a lock id, a path) only as a word a POSIX
 *  shell reads back as exactly that text, never as something it runs. */

/** Characters no POSIX shell gives a meaning to in a word: a word of only these is written as it is. */
const PLAIN = /^[A-Za-z0-9_@+:,./-]+$/;

/** A word in single quotes, each `'` as `'\''`: inside single quotes a shell expands nothing
 *  (no `$(…)`, no backticks, no `$VAR`, no `!` history in a script), so the word is the text. */
export const singleQuoted = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** A word as a shell reads it back as `text`: as it is when it is plain, else single-quoted. */
export const shellQuote = (text: string): string => (PLAIN.test(text) ? text : singleQuoted(text));

/** Whether a text can be pasted into a command at all: a control character (a line break, an escape)
 *  is shown as text on a terminal and in a comment, so the command a reader copies would name another
 *  text; a hint says what to do instead of suggesting a command that cannot work. */
// eslint-disable-next-line no-control-regex
export const pasteable = (text: string): boolean => !/[\u0000-\u001f\u007f-\u009f]/.test(text);
