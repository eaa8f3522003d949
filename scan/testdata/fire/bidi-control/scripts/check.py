access = "user‮ ⁦# admin⁩ ⁦"
if access != "none":
    pass
