import type { Painter, Sink } from "../report/painter.js";
import type { RunOutput } from "../run-output.js";

/** What a use case of this layer prints through: what any use case says (RunOutput), where a view
 *  writes its report (Sink), and the painter of stderr's text (a plan shown before the prompt). The
 *  CLI's Output is one. */
export interface SessionOutput extends RunOutput, Sink {
  readonly err: Painter;
}
