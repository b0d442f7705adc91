import { UserError } from "../errors.js";
import { singleQuoted } from "../shell-quote.js";

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

function all(node: CompletionNode): CompletionNode[] {
  return [node, ...node.children.flatMap(all)];
}

const key = (path: string[]): string => path.join("/");
const last = (n: CompletionNode): string => n.path[n.path.length - 1] ?? "";
/** Text inside single quotes, for sh, zsh and fish (fish also takes '\'' inside single quotes). */
const sq = singleQuoted;
/** A pattern of a case statement matching exactly this text. */
const pat = (s: string): string => `"${s.replace(/(["\\$`])/g, "\\$1")}"`;
const longFlags = (n: CompletionNode): string[] => n.options.flatMap((o) => o.flags.filter((f) => f.startsWith("--")));
/** "path flag" of every flag that takes a value, for the case statements below. */
const valueFlagKeys = (nodes: CompletionNode[]): string[] =>
  nodes.flatMap((n) => n.options.flatMap((o) => (o.values ? o.flags.map((f) => `${key(n.path)} ${f}`) : [])));

/** The function bash and zsh both run. It walks the words typed before the one being completed to find
 *  the command path: a flag that takes a value skips that value (so `--env test` is not the test
 *  command), and a word naming a subcommand of the path so far extends it. Then it offers the values of
 *  the flag being given a value (`--format <Tab>`, `--format=<Tab>`), or the path's flags, subcommands,
 *  argument values or files. The shells differ in how they name the words and offer candidates. */
function caseFunction(
  nodes: CompletionNode[],
  shell: {
    zsh: boolean;
    /** Lines that set words, cword (the index of the word being completed), first, cur, flag and pre. */
    setup: string[];
    /** Where `--flag=` was split by the shell into `--flag` `=` (bash), the value word is one further. */
    splitsAtEquals: boolean;
  },
  valueAction: (o: CompletionOption) => string,
  wordAction: (n: CompletionNode) => string,
): string[] {
  const arm = (texts: string[]): string => (shell.zsh ? "(" : "") + texts.map(pat).join("|");
  const skip = valueFlagKeys(nodes);
  const values = nodes.flatMap((n) =>
    n.options.flatMap((o) => (o.values ? [`    ${arm(o.flags.map((f) => `${key(n.path)} ${f}`))}) ${valueAction(o)} ;;`] : [])),
  );
  const words = nodes.map((n) => `    ${arm([key(n.path)])}) ${wordAction(n)} ;;`);
  const paths = nodes.filter((n) => n.path.length).map((n) => `      ${arm([`${key(n.path.slice(0, -1))}/${last(n)}`])}) p=${sq(key(n.path))} ;;`);
  return [
    "_revsync() {",
    '  local p="" w i flag="" pre=""',
    ...shell.setup,
    "  for ((i = first; i < cword; i++)); do",
    '    w="${words[i]}"',
    '    case "$p $w" in',
    `      ${arm(skip)})`,
    ...(shell.splitsAtEquals ? ['        [[ "${words[i+1]}" == "=" ]] && i=$((i + 1))'] : []),
    '        (( i + 1 >= cword )) && flag="$w"',
    "        i=$((i + 1)); continue ;;",
    "    esac",
    '    case "$p/$w" in',
    ...paths,
    "    esac",
    "  done",
    '  if [[ -n "$flag" ]]; then',
    '    case "$p $flag" in',
    ...values,
    "    esac",
    "    return",
    "  fi",
    '  case "$p" in',
    ...words,
    "  esac",
    "}",
  ];
}

function bash(root: CompletionNode): string {
  const words = (list: string[]): string => `_revsync_words ${list.map(sq).join(" ")}`;
  const valueAction = (o: CompletionOption): string => (o.file ? "_revsync_files" : o.values?.length ? words(o.values) : "COMPREPLY=()");
  const wordAction = (n: CompletionNode): string => {
    const subs = [...n.children.map(last), ...n.argumentValues];
    const rest = subs.length ? words(subs) : n.fileArgument ? "_revsync_files" : "COMPREPLY=()";
    return `if [[ $cur == -* ]]; then ${words(longFlags(n))}; else ${rest}; fi`;
  };
  return [
    "# revsync completion for bash, generated from revsync's commands by `revsync completion bash`.",
    "# Load it in this shell with: source <(revsync completion bash)",
    "# Candidates that start with the word typed ($cur); $pre (`--flag=` typed as one word) is put back.",
    "_revsync_words() {",
    "  local w",
    "  COMPREPLY=()",
    '  for w in "$@"; do [[ $w == "$cur"* ]] && COMPREPLY+=("$pre$w"); done',
    "}",
    "# File names, one candidate each however many spaces they hold (bash quotes them as it inserts them).",
    "_revsync_files() {",
    "  local IFS=$'\\n'",
    "  compopt -o filenames 2>/dev/null",
    '  COMPREPLY=($(compgen -f -- "$cur"))',
    "}",
    ...caseFunction(
      all(root),
      {
        zsh: false,
        splitsAtEquals: true,
        setup: [
          '  local words=("${COMP_WORDS[@]}") cword=$COMP_CWORD first=1',
          '  local cur="${words[cword]}"',
          "  # --flag=value: bash splits it at = (COMP_WORDBREAKS) into --flag = value; the value is what is completed.",
          '  if [[ $cur == "=" ]]; then cur=""',
          '  elif [[ $cur == --*=* ]]; then flag="${cur%%=*}"; pre="$flag="; cur="${cur#*=}"',
          "  fi",
          "  # A word typed with a quote or backslash before a space: compare its plain text.",
          '  cur="${cur//\\\\ / }"; cur="${cur#[\\"\\\']}"',
        ],
      },
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
    const subs = n.children.map((c) => desc(last(c), c.description));
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
    "# It needs zsh's completion system: `autoload -Uz compinit && compinit` earlier in ~/.zshrc.",
    "# Load it with: source <(revsync completion zsh)   (or save it as _revsync in a folder of $fpath)",
    ...caseFunction(
      all(root),
      {
        zsh: true,
        splitsAtEquals: false,
        setup: [
          '  local cword=$CURRENT first=2 cur="${words[CURRENT]}"',
          "  # --flag=value as one word: complete the value after the =.",
          '  if [[ $cur == --*=* ]]; then flag="${cur%%=*}"; compset -P "*="; cur="${cur#*=}"; fi',
        ],
      },
      valueAction,
      wordAction,
    ),
    'if [[ "$funcstack[1]" = _revsync ]]; then',
    '  _revsync "$@"',
    "elif (( $+functions[compdef] )); then",
    "  compdef _revsync revsync",
    "else",
    "  print -u2 \"revsync completion: zsh's completion system is not loaded; put 'autoload -Uz compinit && compinit' before this line in ~/.zshrc\"",
    "fi",
    "",
  ].join("\n");
}

function fish(root: CompletionNode): string {
  const nodes = all(root);
  const skip = valueFlagKeys(nodes);
  const lines = [
    "# revsync completion for fish, generated from revsync's commands by `revsync completion fish`.",
    "# Load it with: revsync completion fish | source   (or save it as ~/.config/fish/completions/revsync.fish)",
    "complete -c revsync -f",
    "# The command path of the words typed so far: a flag that takes a value skips it (so `--env test` is",
    "# not the test command); a word naming a subcommand of the path so far extends it.",
    "function __revsync_path",
    "    set -l words (commandline -opc)",
    '    set -l p ""',
    "    set -l skip 0",
    "    for w in $words[2..-1]",
    "        if test $skip = 1",
    "            set skip 0",
    "            continue",
    "        end",
    '        switch "$p $w"',
    `            case ${skip.map(sq).join(" ")}`,
    "                set skip 1",
    "                continue",
    "        end",
    '        switch "$p/$w"',
    ...nodes
      .filter((n) => n.path.length)
      .flatMap((n) => [`            case ${sq(`${key(n.path.slice(0, -1))}/${last(n)}`)}`, `                set p ${sq(key(n.path))}`]),
    "        end",
    "    end",
    '    echo "$p"',
    "end",
    "function __revsync_at",
    '    test (__revsync_path) = "$argv[1]"',
    "end",
  ];
  for (const n of nodes) {
    const cond = sq(`__revsync_at ${sq(key(n.path))}`);
    for (const c of n.children) lines.push(`complete -c revsync -n ${cond} -a ${sq(last(c))} -d ${sq(c.description)}`);
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
    if (n.fileArgument) lines.push(`complete -c revsync -n ${cond} -F`);
  }
  return `${lines.join("\n")}\n`;
}

export const SHELLS = ["bash", "zsh", "fish"] as const;

/** The completion script of one shell for revsync's command tree (src/cli/completion.ts reads it from
 *  the commands as registered). */
export function completionScript(shell: string, root: CompletionNode): string {
  if (shell === "bash") return bash(root);
  if (shell === "zsh") return zsh(root);
  if (shell === "fish") return fish(root);
  throw new UserError(`completion: the shell must be bash, zsh or fish, got ${JSON.stringify(shell)}`);
}
