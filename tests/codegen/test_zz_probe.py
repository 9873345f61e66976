from tests.codegen.test_bump import *
def test_show(project, chain, bump):
    r = bump(project, chain.side); print(r.err)
    r = bump(project, "-h"); print("H", r.code, r.out[:80], r.err[:200])
