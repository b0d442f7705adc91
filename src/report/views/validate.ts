import type { Checked } from "../diagnostics.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

export type ValidateView = (checked: Checked, out: Sink) => void;

/** revsync validate: the diagnostics, then in GitHub Actions each also as an annotation. */
export const validateViews: Views<ValidateView> = {
  text: async () => {
    const { diagnosticsText, githubAnnotations } = await import("../diagnostics.js");
    return (checked, out) => {
      diagnosticsText(checked, out);
      githubAnnotations(checked, out);
    };
  },
  json: async () => {
    const { diagnosticsJson, githubAnnotations } = await import("../diagnostics.js");
    return (checked, out) => {
      diagnosticsJson(checked, out);
      githubAnnotations(checked, out);
    };
  },
};
