import { describe, expect, it } from "vitest";
import { dataOutput } from "./data-output.js";
import { Redactor } from "./output.js";

const redactor = (...secrets: string[]): ((t: string) => string) => {
  const r = new Redactor();
  for (const s of secrets) r.add(s);
  return (t) => r.redact(t);
};

describe("data on stdout", () => {
  it("a file that is not UTF-8 (Latin-1): to a pipe every other byte as it is, the secret blanked out; to a terminal, shown as text", () => {
    const bytes = Buffer.concat([Buffer.from("caf"), Buffer.from([0xe9, 0x1b]), Buffer.from(",s3cret-pw\n")]);
    const piped = dataOutput(bytes, redactor("s3cret-pw"), false);
    expect(piped.redacted).toBe(true);
    expect(Buffer.from(piped.data as Uint8Array)).toEqual(Buffer.concat([Buffer.from("caf"), Buffer.from([0xe9, 0x1b]), Buffer.from(",[redacted]\n")]));
    expect(dataOutput(bytes, redactor("s3cret-pw"), true).data).toBe("café\\u001B,[redacted]\n");
  });

  it("a secret beyond Latin-1 in a file that is not UTF-8 cannot be blanked out byte for byte: nothing is printed", () => {
    const bytes = Buffer.concat([Buffer.from([0xff]), Buffer.from("pässwörd-€")]);
    expect(() => dataOutput(bytes, redactor("pässwörd-€"), false)).toThrow(/holds a secret of revsync's sign-in/);
  });

  it("text without a secret or a control character is what it was, to a pipe and to a terminal", () => {
    for (const terminal of [false, true])
      expect(dataOutput("a,b\r\nc\td,e\n", redactor("s3cret-pw"), terminal)).toEqual({ data: "a,b\r\nc\td,e\n", redacted: false });
  });
});
