import { InternalError } from "../errors.js";

/** A report's views: for each output format, by the format's name and in the order --format offers
 *  them (the first is the default), how to load the view of that format. `V` is what the command calls
 *  on the view it picked: for most reports one function of the report and the output, for some a few
 *  (drift renders each environment as it is read, then the run). These tables are the one list of a
 *  report's formats: --format's choices, its help and shell completion are read from them
 *  (`formatsOf`), and a command picks its view once (`pickView`, as Terraform's command views) and
 *  never asks the format again. So a new format of a report is one entry of its table in `views/`, and
 *  nothing else.
 *
 *  Every command line reads these tables (registering the commands), so a views module imports types
 *  only: each view loads what it renders with (`import()`) when a command picks it. What renders a
 *  table or a width (string-width starts a grapheme segmenter, some 25 ms) is never read by a command
 *  that prints none (test/architecture.test.ts holds this). */
export type Views<V> = Readonly<Record<string, () => Promise<V>>>;

/** The formats of a report, the default first: --format's choices. */
export const formatsOf = (views: Views<unknown>): string[] => Object.keys(views);

/** The view of a format the command line named, if the report has one (before commander checked it). */
export async function viewNamed<V>(views: Views<V>, format: string | undefined): Promise<V | undefined> {
  const load = format !== undefined && Object.hasOwn(views, format) ? views[format] : undefined;
  return load?.();
}

/** The view of `format`, or the default's without one. --format's parser lets only the report's own
 *  formats through, so an unknown one is revsync's mistake. */
export async function pickView<V>(views: Views<V>, format: string | undefined): Promise<V> {
  const name = format ?? formatsOf(views)[0];
  const view = await viewNamed(views, name);
  if (view === undefined) throw new InternalError(`this report has no ${JSON.stringify(name)} view (its formats: ${formatsOf(views).join(", ")})`);
  return view;
}
