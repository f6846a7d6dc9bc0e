// The rules of C, D and G, which need several cases, as in Philips' original; the comments name the
// examples the rules were written for.
extension MetaphoneEncoder {
    var germanic: Bool { has(0, "VAN ", "VON ") || has(0, "SCH") }

    mutating func encodeC() {
        // Germanic "ach" (Bacher, Macher) but not "achi", "ache".
        if current > 1 && !isVowel(current - 2) && has(current - 1, "ACH") && !isChar(current + 2, "I")
            && (!isChar(current + 2, "E") || has(current - 2, "BACHER", "MACHER"))
        {
            add("K")
            current += 2
            return
        }
        if current == 0 && has(current, "CAESAR") {
            add("S")
            current += 2
            return
        }
        if has(current, "CHIA") {  // Chianti
            add("K")
            current += 2
            return
        }
        if has(current, "CH") {
            encodeCH()
            return
        }
        if has(current, "CZ") && !has(current - 2, "WICZ") {  // Czerny
            add("S", "X")
            current += 2
            return
        }
        if has(current + 1, "CIA") {  // Focaccia
            add("X")
            current += 3
            return
        }
        // A double C, but not McClellan.
        if has(current, "CC") && !(current == 1 && isChar(0, "M")) {
            if has(current + 2, "I", "E", "H") && !has(current + 2, "HU") {
                // Accident, succeed; otherwise Italian (Bertucci).
                if (current == 1 && isChar(current - 1, "A")) || has(current - 1, "UCCEE", "UCCES") {
                    add("KS")
                } else {
                    add("X")
                }
                current += 3
            } else {
                add("K")
                current += 2
            }
            return
        }
        if has(current, "CK", "CG", "CQ") {
            add("K")
            current += 2
            return
        }
        if has(current, "CI", "CE", "CY") {
            if has(current, "CIO", "CIE", "CIA") { add("S", "X") } else { add("S") }
            current += 2
            return
        }
        add("K")
        if has(current + 1, " C", " Q", " G") {  // Mac Caffrey, Mac Gregor
            current += 3
        } else if has(current + 1, "C", "K", "Q") && !has(current + 1, "CE", "CI") {
            current += 2
        } else {
            current += 1
        }
    }

    mutating func encodeCH() {
        if current > 0 && has(current, "CHAE") {  // Michael
            add("K", "X")
            current += 2
            return
        }
        // Greek roots at the start: chemistry, chorus, but not chore.
        if current == 0 && (has(current + 1, "HARAC", "HARIS") || has(current + 1, "HOR", "HYM", "HIA", "HEM"))
            && !has(0, "CHORE")
        {
            add("K")
            current += 2
            return
        }
        if germanic || has(current - 2, "ORCHES", "ARCHIT", "ORCHID") || has(current + 2, "T", "S")
            || ((has(current - 1, "A", "O", "U", "E") || current == 0)
                && has(current + 2, "L", "R", "N", "M", "B", "H", "F", "V", "W", " "))
        {
            add("K")
        } else if current > 0 {
            if has(0, "MC") { add("K") } else { add("X", "K") }  // McHugh
        } else {
            add("X")
        }
        current += 2
    }

    mutating func encodeD() {
        if has(current, "DG") {
            if has(current + 2, "I", "E", "Y") {  // edge
                add("J")
                current += 3
            } else {  // Edgar
                add("TK")
                current += 2
            }
            return
        }
        current += has(current, "DT", "DD") ? 2 : 1
        add("T")
    }

    mutating func encodeG() {
        if isChar(current + 1, "H") {
            encodeGH()
            return
        }
        if isChar(current + 1, "N") {
            if current == 1 && isVowel(0) && !slavoGermanic {
                add("KN", "N")
            } else if !has(current + 2, "EY") && !isChar(current + 1, "Y") && !slavoGermanic {  // not Cagney
                add("N", "KN")
            } else {
                add("KN")
            }
            current += 2
            return
        }
        if has(current + 1, "LI") && !slavoGermanic {  // Tagliaro
            add("KL", "L")
            current += 2
            return
        }
        // ges-, gep-, gel-, gie- at the start.
        if current == 0
            && (isChar(current + 1, "Y")
                || has(current + 1, "ES", "EP", "EB", "EL", "EY", "IB", "IL", "IN", "IE", "EI", "ER"))
        {
            add("K", "J")
            current += 2
            return
        }
        // -ger-, -gy-, but not danger, ranger, manger, nor after E or I, nor -rgy-, -ogy-.
        if (has(current + 1, "ER") || isChar(current + 1, "Y")) && !has(0, "DANGER", "RANGER", "MANGER")
            && !has(current - 1, "E", "I") && !has(current - 1, "RGY", "OGY")
        {
            add("K", "J")
            current += 2
            return
        }
        // Italian (Biaggi).
        if has(current + 1, "E", "I", "Y") || has(current - 1, "AGGI", "OGGI") {
            if germanic || has(current + 1, "ET") {
                add("K")
            } else if has(current + 1, "IER ") {  // French endings are soft.
                add("J")
            } else {
                add("J", "K")
            }
            current += 2
            return
        }
        skip(doubled: "G")
        add("K")
    }

    mutating func encodeGH() {
        if current > 0 && !isVowel(current - 1) {
            add("K")
            current += 2
            return
        }
        if current == 0 {  // Ghislane, Ghiradelli
            if isChar(current + 2, "I") { add("J") } else { add("K") }
            current += 2
            return
        }
        // Parker's rule: silent after B, H or D (Hugh, bough, Broughton).
        if (current > 1 && has(current - 2, "B", "H", "D")) || (current > 2 && has(current - 3, "B", "H", "D"))
            || (current > 3 && has(current - 4, "B", "H"))
        {
            current += 2
            return
        }
        // Laugh, McLaughlin, cough, rough, tough.
        if current > 2 && isChar(current - 1, "U") && has(current - 3, "C", "G", "L", "R", "T") {
            add("F")
        } else if current > 0 && !isChar(current - 1, "I") {
            add("K")
        }
        current += 2
    }
}
