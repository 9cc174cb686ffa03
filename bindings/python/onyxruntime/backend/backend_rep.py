"""OnyxRuntimeBackendRep: a prepared model for onnx.backend.base's run()."""

import numpy as np

from ..capi._options import RunOptions
from ..capi._ortvalue import OrtValue

# RunOptions attributes a backend caller may set through run(**kwargs): the
# same set onnxruntime's backend accepts. `terminate` is left out because a
# run that starts terminated can only fail.
ALLOWED_RUN_OPTIONS = frozenset({"log_severity_level", "log_verbosity_level", "logid",
                                 "only_execute_path_to_fetches"})


def run_options_from_kwargs(kwargs):
    """A RunOptions with the allowed attributes of `kwargs` set. A RunOptions
    attribute outside the allowed set is an error; other keys are ignored, as
    onnxruntime does, since run_model passes one kwargs dict to both
    prepare() and run()."""
    options = RunOptions()
    for key, value in kwargs.items():
        if key in ALLOWED_RUN_OPTIONS:
            setattr(options, key, value)
        elif hasattr(options, key):
            raise RuntimeError("RunOptions attribute '%s' is not permitted via the backend API. Allowed attributes: %s"
                               % (key, ", ".join(sorted(ALLOWED_RUN_OPTIONS))))
    return options


class OnyxRuntimeBackendRep:
    """A model loaded into an InferenceSession, ready to be run repeatedly
    (onnx.backend.base.BackendRep)."""

    def __init__(self, session):
        """Wraps an onyxruntime.InferenceSession."""
        self._session = session

    @property
    def session(self):
        """The underlying InferenceSession."""
        return self._session

    def run(self, inputs, **kwargs):
        """Runs the model and returns its outputs as a list of numpy arrays,
        in the model's output order.

        :param inputs: a list (or tuple) with one array per model input, in
            the order of ``session.get_inputs()``; a dict {input name: array};
            or one array (numpy or OrtValue) when the model has exactly one
            input. onnxruntime accepts only the list and single-array forms.
        :param kwargs: RunOptions attributes (log_severity_level,
            log_verbosity_level, logid, only_execute_path_to_fetches).
        """
        options = run_options_from_kwargs(kwargs)
        names = [i.name for i in self._session.get_inputs()]
        if isinstance(inputs, dict):
            feed = dict(inputs)
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) != len(names):
                raise ValueError("the model has %d input(s) %s but %d value(s) were given"
                                 % (len(names), names, len(inputs)))
            feed = dict(zip(names, inputs))
        elif isinstance(inputs, (np.ndarray, np.generic, OrtValue)):
            if len(names) != 1:
                raise RuntimeError("Model expects %d inputs %s; a single array was given" % (len(names), names))
            feed = {names[0]: inputs}
        else:
            raise TypeError("inputs must be a list, a dict or a numpy array, got %s" % type(inputs).__name__)
        # np.generic (a numpy scalar) is fed as the 0-d array it stands for.
        feed = {k: (np.asarray(v) if isinstance(v, np.generic) else v) for k, v in feed.items()}
        return self._session.run(None, feed, options)


# onnxruntime's class name, for code that imports it from this module.
OnnxRuntimeBackendRep = OnyxRuntimeBackendRep
