// The letters whose rules need several cases, as in Philips' original; the comments name the
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

    mutating func encodeJ() {
        // Spanish: Jose, San Jacinto.
        if has(current, "JOSE") || has(0, "SAN ") {
            if (current == 0 && isChar(current + 4, " ")) || has(0, "SAN ") { add("H") } else { add("J", "H") }
            current += 1
            return
        }
        if current == 0 && !has(current, "JOSE") {
            add("J", "A")  // Yankelovich, Jankelowicz
        } else if isVowel(current - 1) && !slavoGermanic && (isChar(current + 1, "A") || isChar(current + 1, "O")) {
            add("J", "H")  // Spanish: bajador
        } else if current == last {
            add("J", "")
        } else if !has(current + 1, "L", "T", "K", "S", "N", "M", "B", "Z") && !has(current - 1, "S", "K", "L") {
            add("J")
        }
        skip(doubled: "J")
    }

    mutating func encodeL() {
        if isChar(current + 1, "L") {
            // Spanish: Cabrillo, Gallegos.
            if (current == length - 3 && has(current - 1, "ILLO", "ILLA", "ALLE"))
                || ((has(last - 1, "AS", "OS") || has(last, "A", "O")) && has(current - 1, "ALLE"))
            {
                add("L", "")
                current += 2
                return
            }
            current += 2
        } else {
            current += 1
        }
        add("L")
    }

    mutating func encodeS() {
        if has(current - 1, "ISL", "YSL") {  // island, isle, Carlisle
            current += 1
            return
        }
        if current == 0 && has(current, "SUGAR") {
            add("X", "S")
            current += 1
            return
        }
        if has(current, "SH") {
            if has(current + 1, "HEIM", "HOEK", "HOLM", "HOLZ") { add("S") } else { add("X") }  // Germanic
            current += 2
            return
        }
        if has(current, "SIO", "SIA") || has(current, "SIAN") {  // Italian, Armenian
            if !slavoGermanic { add("S", "X") } else { add("S") }
            current += 3
            return
        }
        // Smith and Schmidt, Snider and Schneider; Slavic -sz-.
        if (current == 0 && has(current + 1, "M", "N", "L", "W")) || has(current + 1, "Z") {
            add("S", "X")
            current += has(current + 1, "Z") ? 2 : 1
            return
        }
        if has(current, "SC") {
            encodeSC()
            return
        }
        // French endings: Resnais, Artois.
        if current == last && has(current - 2, "AI", "OI") { add("", "S") } else { add("S") }
        current += has(current + 1, "S", "Z") ? 2 : 1
    }

    mutating func encodeSC() {
        if isChar(current + 2, "H") {
            // Dutch: school, schooner; Schermerhorn, Schenker.
            if has(current + 3, "OO", "ER", "EN", "UY", "ED", "EM") {
                if has(current + 3, "ER", "EN") { add("X", "SK") } else { add("SK") }
            } else if current == 0 && !isVowel(3) && !isChar(3, "W") {
                add("X", "S")
            } else {
                add("X")
            }
            current += 3
            return
        }
        if has(current + 2, "I", "E", "Y") { add("S") } else { add("SK") }
        current += 3
    }

    mutating func encodeT() {
        if has(current, "TION") || has(current, "TIA", "TCH") {
            add("X")
            current += 3
            return
        }
        if has(current, "TH") || has(current, "TTH") {
            // Thomas, Thames, or Germanic.
            if has(current + 2, "OM", "AM") || germanic { add("T") } else { add("0", "T") }
            current += 2
            return
        }
        current += has(current + 1, "T", "D") ? 2 : 1
        add("T")
    }

    mutating func encodeW() {
        if has(current, "WR") {
            add("R")
            current += 2
            return
        }
        if current == 0 && (isVowel(current + 1) || has(current, "WH")) {
            // Wasserman and Vasserman; Uomo and Womo.
            if isVowel(current + 1) { add("A", "F") } else { add("A") }
        }
        // Arnow and Arnoff.
        if (current == last && isVowel(current - 1)) || has(current - 1, "EWSKI", "EWSKY", "OWSKI", "OWSKY")
            || has(0, "SCH")
        {
            add("", "F")
            current += 1
            return
        }
        if has(current, "WICZ", "WITZ") {  // Filipowicz
            add("TS", "FX")
            current += 4
            return
        }
        current += 1
    }

    mutating func encodeZ() {
        if isChar(current + 1, "H") {  // Pinyin: Zhao
            add("J")
            current += 2
            return
        }
        if has(current + 1, "ZO", "ZI", "ZA") || (slavoGermanic && current > 0 && !isChar(current - 1, "T")) {
            add("S", "TS")
        } else {
            add("S")
        }
        skip(doubled: "Z")
    }
}
