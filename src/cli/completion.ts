import type { Command, Option } from "commander";
import { UserError } from "../errors.js";

/** One command of the tree, as completion needs it: its path from the root, its subcommands and
 *  options. Read from commander's own tree, so a new command or flag completes without a hand-kept list. */
export interface CompletionNode {
  /** The words from the root: [] for revsync itself, ["approvals", "list"] for a subcommand. */
  path: string[];
  description: string;
  children: CompletionNode[];
  options: CompletionOption[];
  /** Whether the command takes a file or folder as an argument (show PLANFILE, apply [PLANFILE], init [DIR]). */
  fileArgument: boolean;
  /** The values its argument takes, when it names them (completion bash|zsh|fish). */
  argumentValues: string[];
}

export interface CompletionOption {
  flags: string[];
  description: string;
  /** undefined: a switch; [] : a value with nothing to offer; else the values to offer. */
  values?: string[];
  file: boolean;
}

/** Options whose value is a path: completed with file names. */
const FILE_OPTIONS = new Set(["--config", "--out", "--output", "--dir", "--state"]);
/** Arguments that name a file or folder. */
const FILE_ARGUMENTS = new Set(["planfile", "dir"]);

function optionOf(o: Option): CompletionOption {
  const flags = [o.short, o.long].filter((f): f is string => !!f);
  const takesValue = o.required || o.optional;
  const file = !!o.long && FILE_OPTIONS.has(o.long);
  return { flags, description: o.description, values: takesValue ? (o.argChoices ?? []) : undefined, file };
}

export function completionTree(cmd: Command, path: string[] = []): CompletionNode {
  const args = (cmd as unknown as { registeredArguments?: { name(): string; argChoices?: string[] }[] }).registeredArguments ?? [];
  return {
    path,
    description: cmd.description(),
    children: cmd.commands.map((c) => completionTree(c, [...path, c.name()])),
    options: [
      ...cmd.options.filter((o) => !o.hidden).map(optionOf),
      { flags: ["-h", "--help"], description: "show help", file: false },
      ...(path.length === 0 ? [{ flags: ["-V", "--version"], description: "show the version", file: false }] : []),
    ],
    fileArgument: args.some((a) => FILE_ARGUMENTS.has(a.name())),
    argumentValues: args.flatMap((a) => a.argChoices ?? []),
  };
}

function all(node: CompletionNode): CompletionNode[] {
  return [node, ...node.children.flatMap(all)];
}

const key = (path: string[]): string => path.join("/");
/** Text inside single quotes, for sh and zsh. */
const sq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
/** A pattern of a case statement matching exactly this text. */
const pat = (s: string): string => `"${s.replace(/(["\\$`])/g, "\\$1")}"`;

/** The function bash and zsh both run: find the command path among the words typed, then offer a
 *  flag's values, or the path's flags, subcommands or files. The shells differ in how they name the
 *  words (and zsh writes a case pattern in parentheses). */
function caseFunction(
  nodes: CompletionNode[],
  shell: { cur: string; prev: string; first: number; count: string; word: string; zsh: boolean },
  /** What to do after a flag that takes a value; and for a command path, with the word being typed. */
  valueAction: (o: CompletionOption) => string,
  wordAction: (n: CompletionNode) => string,
): string[] {
  const arm = (text: string): string => (shell.zsh ? `(${pat(text)}` : pat(text));
  const values = nodes.flatMap((n) =>
    n.options.flatMap((o) => (o.values ? o.flags.map((f) => `    ${arm(`${key(n.path)} ${f}`)}) ${valueAction(o)}; return ;;`) : [])),
  );
  const words = nodes.map((n) => `    ${arm(key(n.path))}) ${wordAction(n)} ;;`);
  // A word that names a subcommand of the path so far extends it; anything else (a flag, a value, an
  // argument) leaves it.
  const paths = nodes
    .filter((n) => n.path.length)
    .map((n) => `      ${arm(`${key(n.path.slice(0, -1))}/${n.path[n.path.length - 1]}`)}) p=${sq(key(n.path))} ;;`);
  return [
    "_revsync() {",
    `  local cur="${shell.cur}" prev="${shell.prev}" p="" w i`,
    `  for ((i = ${shell.first}; i < ${shell.count}; i++)); do`,
    `    w="${shell.word}"`,
    '    case "$p/$w" in',
    ...paths,
    "    esac",
    "  done",
    '  case "$p $prev" in',
    ...values,
    "  esac",
    '  case "$p" in',
    ...words,
    "  esac",
    "}",
  ];
}

function bash(root: CompletionNode): string {
  const words = (list: string[]): string => `COMPREPLY=($(compgen -W ${sq(list.join(" "))} -- "$cur"))`;
  const valueAction = (o: CompletionOption): string => (o.file ? "_revsync_files" : o.values?.length ? words(o.values) : "COMPREPLY=()");
  const wordAction = (n: CompletionNode): string => {
    const flags = n.options.flatMap((o) => o.flags.filter((f) => f.startsWith("--")));
    const subs = [...n.children.map((c) => c.path[c.path.length - 1] ?? ""), ...n.argumentValues];
    const rest = subs.length ? words(subs) : n.fileArgument ? "_revsync_files" : "";
    return `if [[ $cur == -* ]]; then ${words(flags)}; ${rest ? `else ${rest}; ` : ""}fi`;
  };
  return [
    "# revsync completion for bash, generated from revsync's commands by `revsync completion bash`.",
    "# Load it in this shell with: source <(revsync completion bash)",
    "_revsync_files() {",
    "  compopt -o filenames 2>/dev/null",
    '  COMPREPLY=($(compgen -f -- "$cur"))',
    "}",
    ...caseFunction(
      all(root),
      { cur: "${COMP_WORDS[COMP_CWORD]}", prev: "${COMP_WORDS[COMP_CWORD-1]}", first: 1, count: "COMP_CWORD", word: "${COMP_WORDS[i]}", zsh: false },
      valueAction,
      wordAction,
    ),
    "complete -F _revsync revsync",
    "",
  ].join("\n");
}

function zsh(root: CompletionNode): string {
  const desc = (name: string, d: string): string => sq(`${name.replace(/:/g, "\\:")}:${d}`);
  const valueAction = (o: CompletionOption): string => (o.file ? "_files" : o.values?.length ? `compadd -- ${o.values.map(sq).join(" ")}` : ":");
  const wordAction = (n: CompletionNode): string => {
    const flags = n.options.flatMap((o) => o.flags.filter((f) => f.startsWith("--")).map((f) => desc(f, o.description)));
    const subs = n.children.map((c) => desc(c.path[c.path.length - 1] ?? "", c.description));
    const rest = subs.length
      ? `local -a c=(${subs.join(" ")}); _describe command c`
      : n.argumentValues.length
        ? `compadd -- ${n.argumentValues.map(sq).join(" ")}`
        : n.fileArgument
          ? "_files"
          : ":";
    return `if [[ $cur == -* ]]; then local -a o=(${flags.join(" ")}); _describe option o; else ${rest}; fi`;
  };
  return [
    "#compdef revsync",
    "# revsync completion for zsh, generated from revsync's commands by `revsync completion zsh`.",
    "# Load it with: source <(revsync completion zsh)   (or save it as _revsync in a folder of $fpath)",
    ...caseFunction(
      all(root),
      { cur: "${words[CURRENT]}", prev: "${words[CURRENT-1]}", first: 2, count: "CURRENT", word: "${words[i]}", zsh: true },
      valueAction,
      wordAction,
    ),
    'if [[ "$funcstack[1]" = _revsync ]]; then _revsync "$@"; else compdef _revsync revsync; fi',
    "",
  ].join("\n");
}

function fish(root: CompletionNode): string {
  const nodes = all(root);
  const lines = [
    "# revsync completion for fish, generated from revsync's commands by `revsync completion fish`.",
    "# Load it with: revsync completion fish | source   (or save it as ~/.config/fish/completions/revsync.fish)",
    "complete -c revsync -f",
  ];
  /** The condition that the words typed so far are exactly this command path (not one of its children). */
  const when = (n: CompletionNode): string => {
    if (!n.path.length) return "__fish_use_subcommand";
    const parts = n.path.map((w) => `__fish_seen_subcommand_from ${w}`);
    const children = n.children.map((c) => c.path[c.path.length - 1]);
    if (children.length) parts.push(`not __fish_seen_subcommand_from ${children.join(" ")}`);
    return parts.join("; and ");
  };
  for (const n of nodes) {
    const cond = sq(when(n));
    for (const c of n.children) lines.push(`complete -c revsync -n ${cond} -a ${sq(c.path[c.path.length - 1] ?? "")} -d ${sq(c.description)}`);
    for (const o of n.options) {
      const long = o.flags.find((f) => f.startsWith("--"));
      const short = o.flags.find((f) => !f.startsWith("--"));
      const parts = [`complete -c revsync -n ${cond}`];
      if (long) parts.push(`-l ${long.slice(2)}`);
      if (short) parts.push(`-s ${short.slice(1)}`);
      if (o.values) parts.push(o.file ? "-r -F" : o.values.length ? `-x -a ${sq(o.values.join(" "))}` : "-x");
      parts.push(`-d ${sq(o.description)}`);
      lines.push(parts.join(" "));
    }
    if (n.argumentValues.length) lines.push(`complete -c revsync -n ${cond} -a ${sq(n.argumentValues.join(" "))}`);
    if (n.fileArgument && n.path.length) lines.push(`complete -c revsync -n ${sq(n.path.map((w) => `__fish_seen_subcommand_from ${w}`).join("; and "))} -F`);
  }
  return `${lines.join("\n")}\n`;
}

export const SHELLS = ["bash", "zsh", "fish"] as const;

/** The completion script of one shell for a command tree. */
export function completionScript(shell: string, program: Command): string {
  const root = completionTree(program);
  if (shell === "bash") return bash(root);
  if (shell === "zsh") return zsh(root);
  if (shell === "fish") return fish(root);
  throw new UserError(`completion: the shell must be bash, zsh or fish, got ${JSON.stringify(shell)}`);
}
