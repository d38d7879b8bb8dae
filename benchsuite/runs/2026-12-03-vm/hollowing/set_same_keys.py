import socket, sys, time, subprocess
port=int(sys.argv[1]); pid=int(sys.argv[2]); nkeys=int(sys.argv[3]); size=int(sys.argv[4]); rounds=int(sys.argv[5])
s=socket.create_connection(('127.0.0.1',port))
val=b'x'*size
def rss():
    for l in open(f'/proc/{pid}/status'):
        if l.startswith('VmRSS'): return int(l.split()[1])//1024
for r in range(rounds):
    buf=b''
    for k in range(nkeys):
        s.sendall(b'set k%d 0 0 %d noreply\r\n' % (k, size) + val + b'\r\n')
    s.sendall(b'stats\r\n')
    data=b''
    while not data.endswith(b'END\r\n'):
        data+=s.recv(65536)
    st=dict(l.split()[1:3] for l in data.decode().split('\r\n') if l.startswith('STAT'))
    print(f"round {r}: rss {rss()} MiB, curr_items {st.get('curr_items')}, bytes {st.get('bytes')}", flush=True)
