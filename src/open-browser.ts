import { spawn } from "node:child_process";
import { delimiter } from "node:path";

/** The commands that open a URL in the person's browser, in the order they are tried: each of BROWSER
 *  (a list separated as PATH is, each a command whose `%s` stands for the URL, else given it as its last
 *  word: the convention of xdg-open and Python's webbrowser), else the platform's own opener. */
export function browserCommands(url: string, penv: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string[][] {
  const browser = penv.BROWSER?.trim();
  if (browser)
    return browser
      .split(delimiter)
      .map((c) => words(c))
      .filter((w) => w.length > 0)
      .map((w) => (w.some((x) => x.includes("%s")) ? w.map((x) => x.replaceAll("%s", url)) : [...w, url]));
  if (platform === "darwin") return [["open", url]];
  // rundll32 hands the URL to the default browser as it is (cmd's start would read its & and ^).
  if (platform === "win32") return [["rundll32", "url.dll,FileProtocolHandler", url]];
  return [["xdg-open", url]];
}

/** Opens the URL in the browser: true when a command started (it runs on by itself), false when none
 *  could be (the caller prints the URL for the person to open). Never waits for the browser. */
export async function openBrowser(url: string, penv: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  for (const [command, ...args] of browserCommands(url, penv, platform)) {
    if (command && (await started(command, args, penv))) return true;
  }
  return false;
}

function started(command: string, args: string[], penv: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: "ignore", detached: true, env: penv, windowsHide: true });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}

/** A command's words, as a shell splits them without expanding anything: blanks separate, quotes
 *  (single or double) keep a word together. */
function words(command: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (const c of command) {
    if (quote) {
      if (c === quote) quote = undefined;
      else word = (word ?? "") + c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (/\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else word = (word ?? "") + c;
  }
  if (word !== undefined) out.push(word);
  return out;
}
