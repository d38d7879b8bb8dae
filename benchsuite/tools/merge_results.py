import json,sys
out=sys.argv[1]; files=sys.argv[2:]
base=json.load(open(files[0]))
reps=base["report"] if isinstance(base["report"],list) else [base["report"]]
idx={}
for rep in reps:
    for r in rep["rows"]: idx[(r["size"],r["threads"],r["cache"])]=r
for f in files[1:]:
    d=json.load(open(f)); rr=d["report"] if isinstance(d["report"],list) else [d["report"]]
    for rep in rr:
        for r in rep["rows"]:
            k=(r["size"],r["threads"],r["cache"])
            if k in idx: idx[k]["mops_runs"]+=r["mops_runs"]
json.dump(base,open(out,"w"))
