import sys, time, statistics, importlib.util, torch, numba
from rlperf.replay import host_gather as new
from rlperf.replay.gather_probe import _table
spec = importlib.util.spec_from_file_location("hgold", "results/reports/replay/cpu-2vcpu-amd-epyc/2026-12-04-host-gather-streaming/adhoc/host_gather_4889150.py"); old = importlib.util.module_from_spec(spec); spec.loader.exec_module(old)
torch.set_num_threads(1); numba.set_num_threads(1)
rows=2**20; t=_table(rows,930); S=32768; st=torch.zeros(S,930)
g=torch.Generator().manual_seed(1)
def tm(f, idxs):
    ms=[]
    for i,idx in enumerate(idxs):
        a=time.perf_counter_ns(); f(idx); b=time.perf_counter_ns()
        if i>=2: ms.append((b-a)/1e6)
    return statistics.median(ms)
meth = {"old-stream": lambda i: old.gather("stream", t, i, st), "new-stream": lambda i: new.gather("stream", t, i, st),
        "old-plain": lambda i: old.gather("plain", t, i, st), "new-stream-line": lambda i: new.gather("stream-line", t, i, st),
        "index_select": lambda i: torch.index_select(t,0,i,out=st)}
res={}
for rnd in range(5):
    for kind in ("seq","rand"):
        if kind=="seq":
            idxs=[]
            for _ in range(12):
                s0=int(torch.randint(rows-S,(1,),generator=g)); idxs.append(torch.arange(s0,s0+S))
        else: idxs=[torch.randint(rows,(S,),generator=g) for _ in range(12)]
        names=list(meth); names=names[rnd%len(names):]+names[:rnd%len(names)]
        for n in names: res.setdefault((kind,n),[]).append(tm(meth[n], idxs))
for k,v in sorted(res.items()): print(k, round(statistics.median(v),2), [round(x,2) for x in v])
