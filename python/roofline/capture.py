# SPDX-License-Identifier: Apache-2.0
"""Record a PyTorch program's aten ops as an op trace (docs/op-trace-format.md).

The tool prices a program from what it dispatches, not from its source: every aten op, with its
tensors' shapes, dtypes and strides, and when each storage is made and dropped (its memory).
A `TorchDispatchMode` sees each op after autograd and after composite ops have decomposed, so
`linear` arrives as `t` + `addmm`, as the GPU would run it.

What it cannot see, and how to live with it:
- On the meta device (the default: no weights, no GPU) CUDA autocast does not apply (the tensors
  are not CUDA tensors), so an autocast program records in its weights' dtype. Capture it with
  device="cuda", or write the model in the target dtype.
- Ops are recorded as they dispatch: torch.compile'd regions run Inductor's kernels, which
  dispatch no aten ops; SDPA records the kernel the device chose (on meta, possibly its math
  fallback rather than flash attention). Capture eager code on the device you mean to price.
- device="meta" moves the model, the optimizer's state and the inputs to meta in place; a step
  that holds its own references to the old parameters (rather than the model's and the
  optimizer's) still sees those.
"""
import datetime
import math
import platform

import torch
from torch.utils._python_dispatch import TorchDispatchMode

try:
    from torch.multiprocessing.reductions import StorageWeakRef
except ImportError:  # not where torch 1.13 and 2.x keep it: the same few lines

    class StorageWeakRef:
        """A weak reference to a storage: `expired()` once no tensor holds it."""

        def __init__(self, storage):
            self.cdata = storage._weak_ref()
            self._free = type(storage)._free_weak_ref
            self._expired = type(storage)._expired

        def expired(self):
            return self._expired(self.cdata)

        def __del__(self):
            self._free(self.cdata)


FORMAT, VERSION = "roofline-op-trace", 1


def _storage(t):
    """The tensor's storage object (untyped where torch has one), or None (sparse, nested, ...)."""
    for accessor in ("untyped_storage", "_storage", "storage"):
        get = getattr(t, accessor, None)
        if get is not None:
            try:
                return get()
            except (RuntimeError, NotImplementedError, TypeError):
                return None
    return None


def _name(value):
    """A dtype, layout or memory format as PyTorch names it: `bfloat16`, `channels_last`."""
    return str(value).replace("torch.", "")


class _Storages:
    """Integer ids for storages, and which of them have died.

    Storages are keyed by their StorageImpl's address (`_cdata`), which meta tensors have too
    (their data_ptr() is 0). A weak reference per live storage keeps that address from being
    reused while it is tracked and says when the last tensor holding it is gone.
    """

    def __init__(self, trace):
        self.trace = trace
        self.ids = {}  # cdata -> id, live storages only
        self.refs = {}  # cdata -> StorageWeakRef
        self.next_id = 0

    def lookup(self, t):
        """(id, storage, new): the storage's id, registering it when first seen."""
        s = _storage(t)
        if s is None:
            return None, None, False
        key = s._cdata
        if key in self.ids:
            return self.ids[key], s, False
        sid = self.next_id
        self.next_id += 1
        self.ids[key] = sid
        self.refs[key] = StorageWeakRef(s)
        return sid, s, True

    def declare(self, t, kind):
        """A storage alive before the first op (or first met as an op's input): in `storages`."""
        sid, s, new = self.lookup(t)
        if new:
            self.trace["storages"].append({"id": sid, "bytes": int(s.nbytes()), "kind": kind})
        return sid

    def expired(self):
        """The ids of the tracked storages no tensor holds any more, forgotten from now on."""
        dead = [key for key, ref in self.refs.items() if ref.expired()]
        for key in dead:
            del self.refs[key]
        return [self.ids.pop(key) for key in dead]


class _Recorder(TorchDispatchMode):
    """Appends each dispatched aten op to the trace, in the phase the program is in."""

    def __init__(self, trace, storages):
        super().__init__()
        self.trace = trace
        self.storages = storages
        self.phases = []  # innermost last: "backward" inside loss.backward(), "optimizer", ...
        self.pending_freed = []  # dropped before the first op
        self.paused = 0  # inside the profiler's record_function: bookkeeping, not the program

    @property
    def phase(self):
        return self.phases[-1] if self.phases else "forward"

    def note_freed(self):
        """Storages dropped since the last op: that op's `freed`."""
        dead = self.storages.expired()
        if not dead:
            return
        ops = self.trace["ops"]
        (ops[-1]["freed"] if ops else self.pending_freed).extend(dead)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.note_freed()
        name = _op_name(func)
        if self.paused or name.startswith("profiler::"):  # the profiler's bookkeeping
            return func(*args, **kwargs)
        positional, keywords = _schema_order(func, args, kwargs)
        inputs = [self.encode(v) for v in positional]
        keyword_values = {k: self.encode(v) for k, v in keywords.items()}
        out = func(*args, **kwargs)
        allocated = []
        outputs = self.outputs(func, out, allocated)
        op = {"op": name, "phase": self.phase, "inputs": inputs}
        if keyword_values:
            op["args"] = keyword_values
        op.update(outputs=outputs, allocated=allocated, freed=self.pending_freed)
        self.pending_freed = []
        self.trace["ops"].append(op)
        return out

    def tensor(self, t, allocated=None):
        """{storage, shape, dtype, stride}; a storage first met here is declared or allocated."""
        entry = {}
        if allocated is None:
            # An input no recorded op made (a tensor built outside the mode, e.g. torch.tensor()'s
            # before lift_fresh) joins `storages` as "other": the reader counts it from the first
            # op rather than from here, an approximation that only ever overstates memory.
            sid = self.storages.declare(t, "other")
        else:
            sid, s, new = self.storages.lookup(t)
            if new:
                allocated.append([sid, int(s.nbytes())])
        if sid is not None:
            entry["storage"] = sid
        entry.update(shape=list(t.shape), dtype=_name(t.dtype))
        try:
            entry["stride"] = list(t.stride())
            if t.storage_offset():
                entry["offset"] = int(t.storage_offset())
        except (RuntimeError, NotImplementedError):  # no strides: sparse, nested, ...
            pass
        return entry

    def encode(self, value):
        """An argument as JSON: tensors as dicts, lists as lists, the rest as their value."""
        if isinstance(value, torch.Tensor):
            return self.tensor(value)
        if isinstance(value, (list, tuple)):
            return [self.encode(v) for v in value]
        return _json_value(value)

    def outputs(self, func, out, allocated):
        """The op's results, a list: tensors (their new storages in `allocated`), lists of
        tensors as lists, anything else null."""

        def result(value):
            if isinstance(value, torch.Tensor):
                return self.tensor(value, allocated)
            if isinstance(value, (list, tuple)):
                return [result(v) for v in value]
            return None

        returns = getattr(getattr(func, "_schema", None), "returns", ())
        if len(returns) > 1 and isinstance(out, (list, tuple)):
            return [result(o) for o in out]
        return [] if out is None else [result(out)]


def _op_name(func):
    """`aten::add.Tensor`, `aten::mm` (the default overload unnamed), on torch 1.13 and 2.x."""
    schema = getattr(func, "_schema", None)
    if schema is None:
        return str(func)
    return schema.name + ("." + schema.overload_name if schema.overload_name else "")


def _schema_order(func, args, kwargs):
    """Every positional argument in schema order, trailing defaults filled in (the dispatcher
    drops them, and readers find arguments by position); the keyword-only ones as given."""
    positional, keywords = list(args), dict(kwargs)
    schema = getattr(func, "_schema", None)
    if schema is None:
        return positional, keywords
    for i, arg in enumerate(schema.arguments):
        if arg.kwarg_only or i < len(args):
            continue
        positional.append(keywords.pop(arg.name) if arg.name in keywords
                          else getattr(arg, "default_value", None))
    return positional, keywords


def _json_value(value):
    """A non-tensor argument as JSON: numbers, booleans, null, names; otherwise its repr."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (torch.dtype, torch.layout, torch.memory_format, torch.device)):
        return _name(value)
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    try:  # floats, SymInt and SymFloat, numpy scalars
        if hasattr(value, "__index__"):
            return int(value)
        if hasattr(value, "__float__"):
            number = float(value)
            return number if math.isfinite(number) else repr(number)  # JSON has no inf, nan
    except (TypeError, ValueError, RuntimeError):
        pass
    return repr(value)


def _tensors(value):
    """The tensors in nested lists, tuples and dicts."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _to_meta(value, moved=None):
    """The same nest of lists, tuples and dicts, its tensors on meta (one tensor met twice, one
    meta tensor)."""
    moved = {} if moved is None else moved
    if isinstance(value, torch.Tensor):
        return moved.setdefault(id(value), value.to("meta"))
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*(_to_meta(v, moved) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_to_meta(v, moved) for v in value)
    if isinstance(value, dict):
        return {k: _to_meta(v, moved) for k, v in value.items()}
    return value


def _is_host_scalar(value):
    """A 0-dim CPU tensor: Adam's step count, which stays on the host whatever the device."""
    return isinstance(value, torch.Tensor) and value.dim() == 0 and value.device.type == "cpu"


def _move_to_meta(model, optimizer):
    """model.to("meta"), keeping tied parameters tied and the optimizer pointed at the model's
    parameters: where a CPU or CUDA parameter cannot become a meta one in place (torch 1.13),
    .to() makes a new one for each module that holds it."""
    slots = [(holder, name, old) for module in model.modules()
             for holder in (module._parameters, module._buffers)
             for name, old in holder.items() if old is not None]
    model.to("meta")
    moved = {}  # id(old) -> its one meta replacement
    for holder, name, old in slots:
        holder[name] = moved.setdefault(id(old), holder[name])
    if optimizer is None:
        return
    for group in optimizer.param_groups:
        group["params"] = [moved.get(id(p), p) for p in group["params"]]
    state = {moved.get(id(p), p): {k: v if _is_host_scalar(v) else _to_meta(v)
                                   for k, v in s.items()}
             for p, s in optimizer.state.items()}
    optimizer.state.clear()
    optimizer.state.update(state)


class _Patched:
    """Sets attributes for the duration of a `with`, restoring what was there."""

    def __init__(self):
        self.undo = []

    def set(self, owner, name, value):
        had = name in vars(owner)
        self.undo.append((owner, name, had, vars(owner).get(name)))
        setattr(owner, name, value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for owner, name, had, old in reversed(self.undo):
            if had:
                setattr(owner, name, old)
            else:
                delattr(owner, name)


def _in_phase(recorder, phase, fn, after=None):
    """fn, with the ops it dispatches recorded in `phase`."""

    def wrapped(*args, **kwargs):
        recorder.phases.append(phase)
        try:
            return fn(*args, **kwargs)
        finally:
            recorder.phases.pop()
            if after is not None:
                after()

    return wrapped


def _gradient_work_as_optimizer(ops):
    """Ops between the last backward and the optimizer's last op (gradient clipping, GradScaler's
    unscale_) run outside both but do the optimizer's work, not the forward's."""
    phases = [op["phase"] for op in ops]
    if "backward" not in phases or "optimizer" not in phases:
        return
    last_backward = len(phases) - 1 - phases[::-1].index("backward")
    last_optimizer = len(phases) - 1 - phases[::-1].index("optimizer")
    for op in ops[last_backward + 1:last_optimizer]:
        op["phase"] = "optimizer"


def _paused(recorder, fn):
    """fn, its ops unrecorded (torch 1.13's record_function, in every optimizer.step(), makes a
    CPU tensor that is no part of the program)."""

    def wrapped(*args, **kwargs):
        recorder.paused += 1
        try:
            return fn(*args, **kwargs)
        finally:
            recorder.paused -= 1

    return wrapped


def capture(model, example_inputs, step=None, *, name=None, device="meta", warmup_steps=0,
            optimizer=None):
    """The op trace of `model` run on `example_inputs`, as a JSON-ready dict.

    step=None records the forward pass, model(*example_inputs), under torch.no_grad().
    step(model, inputs) records the user's whole training step (forward, loss.backward(),
    optimizer.step(), zero_grad()): ops inside backward are phase "backward", those inside
    `optimizer`'s step() and zero_grad() (and between the last backward and them: clipping,
    unscaling) phase "optimizer", the rest "forward".
    warmup_steps runs the step first unrecorded, so that the recorded one is the steady state
    (the optimizer's state and the gradients exist, and are priced as memory alive from the
    start). optimizer: the one `step` steps, passed so that its calls are phase "optimizer", its
    state counts as optimizer memory and, on meta, it follows the model there. device="meta"
    runs on no real memory (see the module's notes); "cuda" runs the model and inputs as given.
    """
    device = str(device)
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    if device == "meta":
        _move_to_meta(model, optimizer)
        example_inputs = _to_meta(example_inputs)

    def run():
        if step is not None:
            step(model, example_inputs)
            return
        with torch.no_grad():
            if isinstance(example_inputs, dict):
                model(**example_inputs)
            else:
                model(*example_inputs)

    for _ in range(warmup_steps):
        run()

    trace = {
        "format": FORMAT,
        "version": VERSION,
        "name": name or f"{type(model).__name__} {'training step' if step else 'forward'}",
        "captured": {"torch": torch.__version__, "device": device,
                     "date": datetime.date.today().isoformat(),
                     "mode": "training" if step is not None else "inference",
                     "python": platform.python_version()},
        "storages": [],
        "ops": [],
    }
    # The batch: the leading size of the first input tensor (the tool scales the activations by it
    # to say what larger batch would fit).
    first = next(iter(_tensors(example_inputs)), None)
    if first is not None and first.dim() > 0:
        trace["captured"]["batch"] = int(first.shape[0])
    storages = _Storages(trace)
    for p in model.parameters():
        storages.declare(p, "parameter")
    for b in model.buffers():
        storages.declare(b, "buffer")
    for t in _tensors(example_inputs):
        storages.declare(t, "input")
    recorder = _Recorder(trace, storages)
    gradients, optimizer_state = {}, {}  # ids, in order, of every storage they were

    def note_gradients():
        for p in model.parameters():
            if p.grad is not None:
                gradients.setdefault(storages.declare(p.grad, "gradient"))

    def note_optimizer_state():
        if optimizer is not None:
            for t in _tensors(list(optimizer.state.values())):
                optimizer_state.setdefault(storages.declare(t, "optimizer"))

    note_gradients()
    note_optimizer_state()

    def after_step():
        note_gradients()
        note_optimizer_state()

    with _Patched() as patch:
        patch.set(torch.autograd, "backward",
                  _in_phase(recorder, "backward", torch.autograd.backward, note_gradients))
        patch.set(torch.autograd, "grad", _in_phase(recorder, "backward", torch.autograd.grad))
        patch.set(torch.Tensor, "backward",
                  _in_phase(recorder, "backward", torch.Tensor.backward, note_gradients))
        record_function = getattr(torch.autograd.profiler, "record_function", None)
        for method in ("__init__", "__enter__", "__exit__") if record_function else ():
            patch.set(record_function, method, _paused(recorder, getattr(record_function, method)))
        if optimizer is not None:
            patch.set(optimizer, "step",
                      _in_phase(recorder, "optimizer", optimizer.step, after_step))
            patch.set(optimizer, "zero_grad",
                      _in_phase(recorder, "optimizer", optimizer.zero_grad))
        with recorder:
            run()
        recorder.note_freed()
    note_gradients()
    note_optimizer_state()
    _gradient_work_as_optimizer(trace["ops"])

    end = {"gradient": list(gradients), "optimizer": list(optimizer_state)}
    if any(end.values()):
        trace["end"] = end
    return trace


