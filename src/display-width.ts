import stringWidth from "string-width";

/** Text padded to a width in terminal columns, not in UTF-16 code units: a CJK character or an emoji
 *  takes two columns, a combining mark none, so a column of names with them still lines up. The width
 *  is string-width's (Unicode's East Asian Width and emoji rules, over grapheme clusters). */
export function padDisplay(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - stringWidth(text)));
}

/** The columns a text takes in a terminal. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}
