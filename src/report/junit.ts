/** JUnit XML as CI reporters read it (Jenkins, GitLab, dorny/test-reporter): the writer every
 *  `--format junit` report goes through, valid against Jenkins' JUnit schema with nothing added. A
 *  report is suites of cases; a case passed, failed (it ran and what it checks does not hold:
 *  `<failure>`) or is an error (it could not be evaluated, or its file could not be read: `<error>`).
 *  Every suite and case has a `time` in seconds (reporters show "NaN" without one); names are unique
 *  within a suite (a second "x" becomes "x (2)"). The schema has no place for a case's file and line
 *  (`file` and `line` attributes, which some reporters read, fail it): a suite is named for its file,
 *  a case's class is its file, and a failure or error message starts with `file:line: `. */
export interface JunitCase {
  /** Shown as the case's class: the file it comes from, say. */
  classname: string;
  name: string;
  /** Where the case is: the start of its failure or error message (`tests/a.yaml:4: …`). */
  where?: { file: string; line: number };
  /** Seconds this case took. */
  seconds: number;
  /** A case that ran and does not hold. */
  failure?: { message: string; text: string };
  /** A case that could not be evaluated. */
  error?: { message: string; text: string };
  /** What the case printed: its detail, shown beside the outcome (`<system-out>`). */
  output?: string;
}

export interface JunitSuite {
  name: string;
  cases: JunitCase[];
}

/** Text as XML 1.0 content or attribute: the five specials escaped, and the characters XML 1.0 cannot
 *  hold at all (most control characters, lone surrogates) replaced, so the report stays well-formed. */
export const xml = (s: string): string =>
  s
    // eslint-disable-next-line no-control-regex -- these are exactly the characters XML cannot hold
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");

/** Seconds as JUnit writes them: three decimals. */
const time = (seconds: number): string => (Math.max(0, seconds) || 0).toFixed(3);

const count = (cases: readonly JunitCase[]) => ({
  tests: cases.length,
  failures: cases.filter((c) => c.failure && !c.error).length,
  errors: cases.filter((c) => c.error).length,
  seconds: cases.reduce((s, c) => s + c.seconds, 0),
});

const totals = (n: ReturnType<typeof count>): string => `tests="${n.tests}" failures="${n.failures}" errors="${n.errors}" time="${time(n.seconds)}"`;

function caseXml(c: JunitCase, name: string): string {
  const head = `    <testcase classname="${xml(c.classname)}" name="${xml(name)}" time="${time(c.seconds)}"`;
  const outcome = c.error ? ["error", c.error] : c.failure ? ["failure", c.failure] : undefined;
  const inner: string[] = [];
  if (outcome) {
    const [tag, { message, text }] = outcome as [string, { message: string; text: string }];
    const at = c.where ? `${c.where.file}:${c.where.line}: ` : "";
    inner.push(`      <${tag} message="${xml(at + message)}">${xml(text)}</${tag}>`);
  }
  if (c.output !== undefined) inner.push(`      <system-out>${xml(c.output)}</system-out>`);
  if (!inner.length) return `${head}/>`;
  return `${head}>\n${inner.join("\n")}\n    </testcase>`;
}

/** The whole report. */
export function junitXml(title: string, suites: readonly JunitSuite[]): string {
  const body = suites.map((s) => {
    const taken = new Set<string>();
    const cases = s.cases.map((c) => {
      let name = c.name;
      for (let n = 2; taken.has(name); n++) name = `${c.name} (${n})`;
      taken.add(name);
      return caseXml(c, name);
    });
    return `  <testsuite name="${xml(s.name)}" ${totals(count(s.cases))}>\n${cases.map((c) => `${c}\n`).join("")}  </testsuite>\n`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${xml(title)}" ${totals(count(suites.flatMap((s) => s.cases)))}>\n${body.join("")}</testsuites>\n`;
}
